// Interop of durable tools with a client that knows nothing of the tasks extension: the official SDK v1 client
// (`@modelcontextprotocol/sdk` 1.x, 2025-11-25 over Streamable HTTP) calls `task: optional` tools with a plain
// callTool. A fast tool answers synchronously; generate_report outlives the budget and is handed back as an ordinary
// result (its widened outputSchema still validates in the SDK), which the test follows through the facade tools
// exactly as a model would: read structuredContent.next, call that tool with those arguments, until the task ends.
// A client that can elicit gets the whole task in one call: the server asks on the call's response stream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { defineTool, META_BACKGROUND_TASK, textResult } from '../../src/index.js';
import { generateReport } from '../../examples/demo/generate-report.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';

type Json = Record<string, unknown>;

const FACADE = ['task_status', 'task_respond', 'task_cancel'];
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const REPORT_TEXT = 'small report\n1. Summary: done.\n2. Findings: done.';

const quickSum = defineTool<{ a: number; b: number }>({
  name: 'quick_sum',
  description: 'Adds two numbers; optionally a task, but always done at once.',
  inputSchema: {
    type: 'object',
    properties: { a: { type: 'number' }, b: { type: 'number' } },
    required: ['a', 'b'],
  },
  // Its own generous budget: however slowly the worker picks the task up, the call waits for it.
  task: { support: 'optional', fallback: { budgetMs: 10_000 } },
  handler: ({ a, b }) => textResult(`sum: ${a + b}`),
});

const toolSets = [{ tools: [generateReport, quickSum] }];
const TASKS = { tasksGetRate: false, defaultPollIntervalMs: 100 } as const;

let handing: DurableTestServer;
let patient: DurableTestServer;
const clients: Client[] = [];
let outlineBefore: string | undefined;

beforeAll(async () => {
  outlineBefore = process.env.DURABLE_MCP_DEMO_OUTLINE_MS;
  process.env.DURABLE_MCP_DEMO_OUTLINE_MS = '1500';
  // A budget well below the outline's 1.5 s: generate_report is handed back.
  handing = await startDurableServer({ toolSets, tasks: { ...TASKS, fallback: { budgetMs: 300 } } });
  // A budget well above it: the call waits for the whole task.
  patient = await startDurableServer({ toolSets, tasks: { ...TASKS, fallback: { budgetMs: 10_000 } } });
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all([handing?.close(), patient?.close()]);
  if (outlineBefore === undefined) delete process.env.DURABLE_MCP_DEMO_OUTLINE_MS;
  else process.env.DURABLE_MCP_DEMO_OUTLINE_MS = outlineBefore;
});

/** The JSON-RPC messages one client POSTed: request and notification methods, `response` for its answers. */
interface Wire {
  sent: string[];
}

/** An SDK v1 client (no tasks extension) connected to `server`, recording the methods it sends. */
async function connect(
  server: DurableTestServer,
  capabilities: Json = {},
): Promise<{ client: Client; wire: Wire }> {
  const wire: Wire = { sent: [] };
  const client = new Client({ name: 'sdk-v1-any-client', version: '0.0.0' }, { capabilities });
  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    fetch: (input, init) => {
      if (init?.method === 'POST' && typeof init.body === 'string') {
        const body = JSON.parse(init.body) as { method?: string };
        wire.sent.push(body.method ?? 'response');
      }
      return fetch(input, init);
    },
  });
  await client.connect(transport);
  clients.push(client);
  return { client, wire };
}

const structured = (result: CallToolResult): Json => (result.structuredContent ?? {}) as Json;

const texts = (result: CallToolResult): string[] =>
  result.content.flatMap((block) => (block.type === 'text' ? [block.text] : []));

/** What a model does with an example answer: fills in the user's reply (here: approve). */
function fillAnswers(args: Json): Json {
  const responses = args.inputResponses as Record<string, { action: unknown; content?: Json }>;
  const filled: Json = {};
  // What the user answered in place of each placeholder: they accept and approve.
  for (const key of Object.keys(responses)) filled[key] = { action: 'accept', content: { approved: true } };
  return { ...args, inputResponses: filled };
}

interface Step {
  tool: string;
  arguments: Json;
  result: CallToolResult;
}

/** What a model got for sending a hand-back's `next` to task_respond as it was, placeholders and all. */
const verbatimAnswers: CallToolResult[] = [];

/**
 * Follows `structuredContent.next` from a handed-back result until the task's status is terminal; a task_respond
 * is first sent as it is (and kept in verbatimAnswers), then filled in with the user's answers.
 */
async function follow(client: Client, first: CallToolResult, maxSteps = 40): Promise<Step[]> {
  const steps: Step[] = [];
  let current = first;
  while (!TERMINAL.has(structured(current).status as string)) {
    if (steps.length >= maxSteps) throw new Error(`task still ${String(structured(current).status)}`);
    const next = structured(current).next as { tool: string; arguments: Json };
    if (next.tool === 'task_respond') {
      verbatimAnswers.push(
        (await client.callTool({ name: next.tool, arguments: next.arguments })) as CallToolResult,
      );
    }
    const args = next.tool === 'task_respond' ? fillAnswers(next.arguments) : next.arguments;
    current = (await client.callTool({ name: next.tool, arguments: args })) as CallToolResult;
    steps.push({ tool: next.tool, arguments: args, result: current });
  }
  return steps;
}

describe('a task-optional tool called by the SDK v1 client (no tasks extension)', () => {
  it('answers a fast tool synchronously with its ordinary result', async () => {
    const { client } = await connect(handing);
    expect(client.getServerCapabilities()?.tasks).toBeDefined();
    const result = (await client.callTool({
      name: 'quick_sum',
      arguments: { a: 2, b: 3 },
    })) as CallToolResult;
    expect(result.content).toEqual([{ type: 'text', text: 'sum: 5' }]);
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toBeUndefined();
    expect(result._meta?.[META_BACKGROUND_TASK]).toBeUndefined();
  });

  it('hands a slow tool back, and the facade tools follow it through input to the report', async () => {
    const { client } = await connect(handing);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['generate_report', 'quick_sum', ...FACADE]));
    const listed = tools.find((t) => t.name === 'generate_report');
    expect(listed?.execution).toEqual({ taskSupport: 'optional' });
    expect(listed?.outputSchema).toMatchObject({
      type: 'object',
      anyOf: [{ required: ['size', 'approved'] }, {}],
    });

    // The SDK validates structuredContent against the listed outputSchema: the hand-back must pass it.
    const handed = (await client.callTool({
      name: 'generate_report',
      arguments: { size: 'small' },
    })) as CallToolResult;
    expect(handed.isError).toBeUndefined();
    const handle = structured(handed);
    const taskId = handle.taskId as string;
    expect(typeof taskId).toBe('string');
    expect(handle).toMatchObject({
      status: 'working',
      instructions: expect.stringContaining(`task ${taskId}`),
      next: { tool: 'task_status', arguments: { taskId } },
    });
    expect(texts(handed)[0]).toBe(handle.instructions);
    expect(texts(handed)[0]).toContain('Do not call generate_report again');
    expect(handed._meta?.[META_BACKGROUND_TASK]).toEqual({ taskId, status: 'working' });

    const steps = await follow(client, handed);
    const called = steps.map((s) => s.tool);
    // task_status until the question, one task_respond, then (if the writing outlived the budget) task_status.
    const respondAt = called.indexOf('task_respond');
    expect(respondAt).toBeGreaterThan(0);
    expect(called.slice(0, respondAt).every((t) => t === 'task_status')).toBe(true);
    expect(called.slice(respondAt + 1).every((t) => t === 'task_status')).toBe(true);
    expect(called.filter((t) => t === 'task_respond')).toHaveLength(1);
    for (const step of steps) expect(step.arguments.taskId).toBe(taskId);

    // The question, as the step before task_respond described it.
    const asking = steps[respondAt - 1]!.result;
    expect(structured(asking)).toMatchObject({
      taskId,
      status: 'input_required',
      inputRequests: {
        approve_outline: {
          method: 'elicitation/create',
          params: { message: 'Approve this outline for a small report? Summary / Findings' },
        },
      },
      next: {
        tool: 'task_respond',
        arguments: {
          taskId,
          inputResponses: {
            approve_outline: {
              action: { placeholder: expect.any(String) },
              content: { approved: { placeholder: expect.stringContaining('approved (boolean, required)') } },
            },
          },
        },
      },
    });
    // Sent as it was, that call answered nothing: the model was told to ask the user, and the task went on waiting.
    const verbatim = verbatimAnswers.at(-1)!;
    expect(verbatim.isError).toBe(true);
    expect(texts(verbatim)[0]).toContain('Ask the user');
    expect(texts(verbatim)[0]).toContain('still waits');
    expect(texts(asking)[0]).toContain('"approve_outline": Approve this outline for a small report?');
    expect(asking._meta?.[META_BACKGROUND_TASK]).toEqual({ taskId, status: 'input_required' });
    expect(steps[respondAt]!.arguments.inputResponses).toEqual({
      approve_outline: { action: 'accept', content: { approved: true } },
    });

    const done = steps.at(-1)!.result;
    expect(done.isError).toBeUndefined();
    expect(done._meta?.[META_BACKGROUND_TASK]).toEqual({ taskId, status: 'completed' });
    // A header, then the tool's own content; its whole CallToolResult in structuredContent.result.
    expect(texts(done)).toHaveLength(2);
    expect(texts(done)[0]).toContain(`Task ${taskId} completed`);
    expect(texts(done)[1]).toBe(REPORT_TEXT);
    expect(structured(done)).toMatchObject({
      taskId,
      status: 'completed',
      instructions: texts(done)[0],
      result: {
        content: [{ type: 'text', text: REPORT_TEXT }],
        structuredContent: { size: 'small', approved: true, sections: ['Summary', 'Findings'] },
      },
    });
    expect(structured(done).next).toBeUndefined();

    // The task stays readable: task_status of the finished task answers the same at once.
    const again = (await client.callTool({ name: 'task_status', arguments: { taskId } })) as CallToolResult;
    expect(structured(again)).toMatchObject({ taskId, status: 'completed' });
    expect(texts(again)[1]).toBe(REPORT_TEXT);
  });

  it('stops a handed-back task through task_cancel; an unknown taskId is a tool error', async () => {
    const { client } = await connect(handing);
    const handed = (await client.callTool({ name: 'generate_report', arguments: {} })) as CallToolResult;
    const { taskId, status } = structured(handed);
    expect(status).toBe('working');

    const cancelled = (await client.callTool({
      name: 'task_cancel',
      arguments: { taskId },
    })) as CallToolResult;
    expect(cancelled.isError).toBeUndefined();
    expect(structured(cancelled)).toMatchObject({ taskId, status: 'cancelled' });
    expect(structured(cancelled).next).toBeUndefined();
    expect(texts(cancelled)).toEqual([`Task ${String(taskId)} was cancelled; it will not finish.`]);
    expect(cancelled._meta?.[META_BACKGROUND_TASK]).toEqual({ taskId, status: 'cancelled' });

    const unknown = (await client.callTool({
      name: 'task_status',
      arguments: { taskId: 'task_unknown' },
    })) as CallToolResult;
    expect(unknown.isError).toBe(true);
    expect(texts(unknown)[0]).toMatch(/^Task not found: task_unknown\./);
  });

  it('lets a client that can elicit get the report in one callTool, asked on the response stream', async () => {
    const { client, wire } = await connect(patient, { elicitation: { form: {} } });
    const asked: Json[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params as Json);
      return { action: 'accept', content: { approved: true } };
    });
    await client.listTools();
    wire.sent.length = 0;

    const progress: string[] = [];
    const result = (await client.callTool(
      { name: 'generate_report', arguments: { size: 'small' } },
      undefined,
      {
        onprogress: (p) => progress.push(p.message ?? ''),
      },
    )) as CallToolResult;
    expect(result.content).toEqual([{ type: 'text', text: REPORT_TEXT }]);
    expect(result.structuredContent).toEqual({
      size: 'small',
      approved: true,
      sections: ['Summary', 'Findings'],
    });
    expect(result._meta?.[META_BACKGROUND_TASK]).toBeUndefined();
    // The task's status messages came as progress on the call's response stream.
    expect(progress).toContain('Preparing report outline.');
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      message: 'Approve this outline for a small report? Summary / Findings',
      requestedSchema: { properties: { approved: { type: 'boolean' } }, required: ['approved'] },
    });
    // One tools/call; the only other POST is the client's answer to the server's elicitation/create.
    expect(wire.sent).toEqual(['tools/call', 'response']);
  });
});
