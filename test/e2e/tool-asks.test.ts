// The input a tool declares it asks for (ToolDefinition.asks), over real HTTP: a caller that could not answer it is
// refused before anything runs or any task exists (-32021, or the 2025-11-25 error of a legacy session), a client
// handed the task back is not (the facade tools answer any input), and a handler that asks for anything else fails.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool, textResult, type InputRequest, type ToolDefinition } from '../../src/index.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';
import { legacyConnect } from '../support/legacy-client.js';
import { validateMessage } from '../support/schema.js';
import { lastMessage, rpc } from '../support/server.js';

type Json = Record<string, unknown>;
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

const approval: InputRequest = {
  method: 'elicitation/create',
  params: { message: 'Deploy?', requestedSchema: { type: 'object', properties: {} } },
};
const sampling = {
  method: 'sampling/createMessage',
  params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 10 },
} as unknown as InputRequest;

/** Step bodies (and prepare rounds) that ran, by tool. */
const ran: string[] = [];
const ranOf = (tool: string): string[] => ran.filter((r) => r === tool);

const tools: ToolDefinition<never>[] = [
  defineTool({
    name: 'deploy',
    asks: ['elicitation/create'],
    task: { support: 'optional', fallback: { budgetMs: 0 } },
    handler: async (_args, ctx) => {
      await ctx.step('build', () => void ran.push('deploy'));
      ctx.input('confirm', approval);
      return textResult('deployed');
    },
  }),
  defineTool({
    name: 'prepared_deploy',
    asks: ['elicitation/create', 'sampling/createMessage'],
    task: {
      support: 'required',
      prepare: (_args, ctx) => {
        ran.push('prepared_deploy');
        ctx.input('confirm', approval);
      },
    },
    handler: () => textResult('deployed'),
  }),
  defineTool({
    name: 'sync_deploy',
    asks: ['elicitation/create'],
    handler: async (_args, ctx) => {
      await ctx.step('build', () => void ran.push('sync_deploy'));
      ctx.input('confirm', approval);
      return textResult('deployed');
    },
  }),
  defineTool({
    name: 'sneaky',
    asks: ['elicitation/create'],
    task: { support: 'optional' },
    handler: (_args, ctx) => {
      ctx.input('model', sampling);
      return textResult('never');
    },
  }),
  defineTool({
    name: 'undeclared',
    task: { support: 'optional' },
    handler: async (_args, ctx) => {
      await ctx.step('build', () => void ran.push('undeclared'));
      ctx.input('confirm', approval);
      return textResult('deployed');
    },
  }),
];

let server: DurableTestServer;

beforeAll(async () => {
  server = await startDurableServer({ toolSets: [{ tools }] });
});
afterAll(async () => {
  await server.close();
});

const call = async (name: string, caps: Json, meta: Json = {}) => {
  const res = await rpc(server.url, 'tools/call', { name, arguments: {} }, { caps, meta });
  return { status: res.status, body: lastMessage(res) };
};
const storedTasks = async (): Promise<number> => {
  const stats = await server.runtime.store.stats?.(Date.now());
  return Object.values(stats?.byStatus ?? {}).reduce((a, b) => a + b, 0);
};

describe('tools that declare what they ask', () => {
  it('refuses a task-aware caller without the capability before any task or step, naming it', async () => {
    const before = await storedTasks();
    const { status, body } = await call('deploy', TASKS);
    expect(status).toBe(400);
    expect(validateMessage(body, 'tools/call')).toEqual([]);
    expect(body.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { elicitation: {} } } });
    expect(await storedTasks()).toBe(before);
    expect(ranOf('deploy')).toEqual([]);
  });

  it('names every missing capability, before the prepare round of a tool', async () => {
    const { body } = await call('prepared_deploy', { ...TASKS, elicitation: { url: {} } });
    expect(body.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { elicitation: { form: {} }, sampling: {} } },
    });
    expect(ranOf('prepared_deploy')).toEqual([]);
  });

  it('names them next to the extension for a client without it, to a tool that runs only as a task', async () => {
    const { body } = await call('prepared_deploy', {});
    expect(body.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { ...TASKS, elicitation: {}, sampling: {} } },
    });
    expect(ranOf('prepared_deploy')).toEqual([]);
  });

  it('creates the task for a caller that can answer', async () => {
    const { body } = await call('deploy', { ...TASKS, elicitation: {} });
    expect((body.result as Json).resultType).toBe('task');
  });

  it('refuses a call without a task the same way, before its first step', async () => {
    const { body } = await call('sync_deploy', {});
    expect(body.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { elicitation: {} } } });
    expect(ranOf('sync_deploy')).toEqual([]);
  });

  it('hands the task back to a client without the extension: the facade tools answer any input', async () => {
    const { body } = await call('deploy', {});
    expect(body.error).toBeUndefined();
    expect((body.result as Json).structuredContent).toMatchObject({ taskId: expect.any(String) });
  });

  it('fails a handler that asks for input its tool does not declare, where it asks', async () => {
    const { body } = await call('sneaky', { elicitation: {}, sampling: {} });
    const result = body.result as Json;
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain(
      'asks for sampling/createMessage, which the tool does not declare (asks: elicitation/create)',
    );
  });

  it('leaves a tool that declares nothing as it was: its task fails where it asks, after its steps', async () => {
    const { body } = await call('undeclared', TASKS);
    const taskId = (body.result as Json).taskId as string;
    const get = async () =>
      lastMessage(await rpc(server.url, 'tasks/get', { taskId }, { caps: TASKS })).result as Json;
    await expect.poll(async () => (await get()).status, { timeout: 5_000 }).toBe('failed');
    expect((await get()).error).toMatchObject({ code: -32021 });
    expect(ranOf('undeclared')).toEqual(['undeclared']);
  });

  it('refuses a 2025-11-25 task call with the legacy error naming the capabilities', async () => {
    const legacy = await legacyConnect(server.url, {}, {});
    const params = { name: 'prepared_deploy', arguments: {}, task: { ttl: 60_000 } };
    const error = await legacy.error('tools/call', params);
    expect(error).toMatchObject({
      code: -32600,
      data: { requiredCapabilities: { elicitation: {}, sampling: {} } },
    });
    expect(error.message).toContain("'elicitation' and 'sampling'");
    expect(ranOf('prepared_deploy')).toEqual([]);
    await legacy.end();
  });
});
