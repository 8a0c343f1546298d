// Fixture tools for the tasks extension scenarios (sync, optional, required, input and failures).
import { defineTool, ProtocolError, textResult, type HandlerContext, type InputRequest } from 'durable-mcp';

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

const confirm = (message: string): InputRequest => ({
  method: 'elicitation/create',
  params: {
    message,
    requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] },
  },
});

const accepted = (answer: Record<string, unknown>): boolean => answer.action === 'accept';
const taskPolicy = { ttlMs: 600_000, pollIntervalMs: 200 };

export const taskTools = [
  defineTool<{ name: string }>({
    name: 'greet',
    description: 'Greets synchronously (never a task)',
    inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    handler: ({ name }) => textResult(`Hello, ${name}!`),
  }),
  defineTool<{ seconds: number; label?: string }>({
    name: 'slow_compute',
    description: 'Computes for the given seconds; a task when the client supports tasks',
    inputSchema: {
      type: 'object',
      properties: { seconds: { type: 'number', minimum: 0, maximum: 600 }, label: { type: 'string' } },
      required: ['seconds'],
    },
    task: { support: 'optional', ...taskPolicy },
    handler: async ({ seconds, label }, ctx: HandlerContext) => {
      await sleep(seconds * 1000, ctx.signal);
      if (ctx.signal.aborted) throw new Error('aborted');
      return textResult(`Computed ${label ?? 'result'} in ${seconds} s`, {
        structuredContent: { seconds, label: label ?? null },
      });
    },
  }),
  defineTool({
    name: 'failing_job',
    description: 'A task-only job that ends with a tool error (isError)',
    inputSchema: { type: 'object', properties: {} },
    task: { support: 'required', ...taskPolicy },
    handler: async (_args, ctx) => {
      await sleep(1000, ctx.signal);
      return textResult('The job failed: simulated failure', { isError: true });
    },
  }),
  defineTool({
    name: 'protocol_error_job',
    description: 'A task-only job that ends with a JSON-RPC error (task failed)',
    inputSchema: { type: 'object', properties: {} },
    task: { support: 'required', ...taskPolicy },
    handler: async (_args, ctx) => {
      await sleep(200, ctx.signal);
      throw new ProtocolError(-32603, 'Simulated protocol error in the job');
    },
  }),
  defineTool<{ filename: string }>({
    name: 'confirm_delete',
    description: 'Asks for confirmation before deleting a file (input during the task)',
    inputSchema: { type: 'object', properties: { filename: { type: 'string' } }, required: ['filename'] },
    task: { support: 'optional', ...taskPolicy },
    handler: ({ filename }, ctx) => {
      const answer = ctx.input('confirm_delete', confirm(`Delete ${filename}?`));
      return textResult(accepted(answer) ? `Deleted ${filename}` : `Kept ${filename}`);
    },
  }),
  defineTool({
    name: 'multi_input',
    description: 'Asks two questions at once (partial answers keep the task waiting)',
    inputSchema: { type: 'object', properties: {} },
    task: { support: 'optional', ...taskPolicy },
    handler: (_args, ctx) => {
      const answers = ctx.inputs({
        first_question: confirm('First question: proceed?'),
        second_question: confirm('Second question: really proceed?'),
      });
      return textResult(`Answered ${Object.keys(answers).length} questions`);
    },
  }),
  defineTool({
    name: 'test_tool_with_task',
    description: 'Asks for a name with MRTR before the task is created, then greets in the task',
    inputSchema: { type: 'object', properties: {} },
    task: {
      support: 'required',
      ...taskPolicy,
      prepare: (_args, ctx) => {
        ctx.input('name', {
          method: 'elicitation/create',
          params: {
            message: 'What is your name?',
            requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
          },
        });
      },
    },
    handler: (_args, ctx) => {
      const answer = ctx.input('name', {
        method: 'elicitation/create',
        params: { message: 'Name?', requestedSchema: {} },
      });
      const content = answer.content as { name?: unknown } | undefined;
      return textResult(`Hello from the task, ${String(content?.name ?? 'stranger')}!`);
    },
  }),
];
