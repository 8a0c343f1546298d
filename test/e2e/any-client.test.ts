// Durable tools for clients without the tasks extension, over real HTTP: calls wait up to a budget, then hand the
// task back as an ordinary result; the facade tools (task_status, task_respond, task_cancel) follow it, owner-scoped,
// on the 2026-07-28 envelope and in a 2025-11-25 session, and an extension-aware client sees the same task.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtocolError } from '../../src/client/index.js';
import { createHttpClient, type McpHttpClient } from '../../src/advanced.js';
import { defineTool, textResult, type InputRequest, type ToolDefinition } from '../../src/index.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';
import { legacyConnect, tokenAuthenticator, type LegacyClient } from '../support/legacy-client.js';
import { validateMessage } from '../support/schema.js';

type Json = Record<string, unknown>;

const BUDGET_MS = 400;
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const BACKGROUND = 'dev.durable-mcp/backgroundTask';

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

const approval: InputRequest = {
  method: 'elicitation/create',
  params: {
    message: 'Go ahead?',
    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
  },
};

const tools: ToolDefinition<never>[] = [
  defineTool<{ word: string }>({
    name: 'quick',
    inputSchema: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
    task: { support: 'optional' },
    handler: ({ word }) => textResult(`quick ${word}`),
  }),
  defineTool<{ ms: number }>({
    name: 'slow',
    inputSchema: { type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] },
    outputSchema: { type: 'object', properties: { slept: { type: 'integer' } }, required: ['slept'] },
    task: { support: 'optional' },
    handler: async ({ ms }, ctx) => {
      await ctx.status('Sleeping.');
      await sleep(ms, ctx.signal);
      if (ctx.signal.aborted) throw new Error('stopped');
      return textResult(`slept ${ms} ms`, { structuredContent: { slept: ms } });
    },
  }),
  defineTool({
    name: 'counts',
    inputSchema: { type: 'object', properties: {} },
    task: { support: 'optional', fallback: { budgetMs: 5_000 } },
    handler: async (_args, ctx) => {
      ctx.progress(1, 2, 'Counting');
      await ctx.step('first', () => 1);
      // The run ends here and the task replays after the sleep: its first progress comes again.
      await ctx.sleep('pause', 50);
      ctx.progress(2, 2, 'Counting');
      await ctx.step('second', () => 2);
      return textResult('counted');
    },
  }),
  defineTool({
    name: 'asks',
    inputSchema: { type: 'object', properties: {} },
    task: { support: 'optional' },
    handler: (_args, ctx) => {
      const answer = ctx.input('go_ahead', approval);
      const ok = answer.action === 'accept' && (answer.content as Json | undefined)?.ok === true;
      return textResult(ok ? 'went ahead' : 'stopped');
    },
  }),
  defineTool({
    name: 'only_task',
    inputSchema: { type: 'object', properties: {} },
    task: { support: 'required' },
    handler: () => textResult('only as a task'),
  }),
  defineTool({
    name: 'only_task_opted_in',
    inputSchema: { type: 'object', properties: {} },
    task: { support: 'required', fallback: { budgetMs: 0 } },
    handler: async (_args, ctx) => {
      await sleep(200, ctx.signal);
      return textResult('handed back, then done');
    },
  }),
  defineTool({
    name: 'kept_sync',
    inputSchema: { type: 'object', properties: {} },
    task: { support: 'optional', fallback: false },
    handler: (_args, ctx) => textResult(`sync ${String(ctx.taskId)}`),
  }),
  defineTool({
    name: 'throws',
    inputSchema: { type: 'object', properties: {} },
    task: { support: 'optional' },
    handler: () => {
      throw new Error('the disk is full');
    },
  }),
];

let server: DurableTestServer;
const client = (token: string, capabilities: Json = {}): McpHttpClient =>
  createHttpClient({ url: server.url, token, capabilities });
let alice: McpHttpClient;
let aliceAsks: McpHttpClient;
let aliceTasks: McpHttpClient;
let bob: McpHttpClient;

beforeAll(async () => {
  server = await startDurableServer({
    toolSets: [{ tools }],
    authenticator: tokenAuthenticator({
      'alice-token': { tenant: 'acme', principal: 'alice' },
      'bob-token': { tenant: 'acme', principal: 'bob' },
    }),
    tasks: { tasksGetRate: false, defaultPollIntervalMs: 100, fallback: { budgetMs: BUDGET_MS } },
  });
  alice = client('alice-token');
  aliceAsks = client('alice-token', { elicitation: {} });
  aliceTasks = client('alice-token', TASKS);
  bob = client('bob-token');
});
afterAll(async () => {
  await server.close();
});

const call = (c: McpHttpClient, name: string, args: Json = {}): Promise<Json> =>
  c.call('tools/call', { name, arguments: args });

const textOf = (result: Json): string =>
  (result.content as Json[])
    .filter((b) => b.type === 'text')
    .map((b) => String(b.text))
    .join('\n');

const structured = (result: Json): Json => result.structuredContent as Json;

/** Follows a task through task_status until it ends or waits for input. */
async function follow(
  c: McpHttpClient,
  taskId: string,
  until: string[] = ['completed', 'failed', 'cancelled'],
) {
  for (let i = 0; i < 50; i++) {
    const result = await call(c, 'task_status', { taskId });
    if (until.includes(String(structured(result).status))) return result;
  }
  throw new Error(`task ${taskId} never reached ${until.join('|')}`);
}

describe('calls from clients without the extension', () => {
  it('a fast tool answers synchronously with its ordinary result', async () => {
    const result = await call(alice, 'quick', { word: 'hi' });
    expect(result.resultType).toBe('complete');
    expect(textOf(result)).toBe('quick hi');
    expect((result._meta as Json)[BACKGROUND]).toBeUndefined();
    expect(validateMessage({ jsonrpc: '2.0', id: 1, result }, 'tools/call')).toEqual([]);
  });

  it('a slow tool hands back within the budget, and task_status brings its result', async () => {
    // The margin is relative to a fast call's round trip in this run (a task created, run and read back).
    const fastBegun = Date.now();
    await call(alice, 'quick', { word: 'baseline' });
    const roundTrip = Date.now() - fastBegun;
    const begun = Date.now();
    const handed = await call(alice, 'slow', { ms: 1_500 });
    const waited = Date.now() - begun;
    expect(waited).toBeGreaterThanOrEqual(BUDGET_MS - 50);
    expect(waited).toBeLessThan(BUDGET_MS + Math.max(1_000, 3 * roundTrip));
    expect(validateMessage({ jsonrpc: '2.0', id: 1, result: handed }, 'tools/call')).toEqual([]);
    expect(handed.resultType).toBe('complete');
    expect(handed.isError).toBeUndefined();
    const handle = structured(handed);
    const taskId = String(handle.taskId);
    expect(taskId).toMatch(/^task_/);
    expect(handle.status).toBe('working');
    expect(handle.next).toEqual({ tool: 'task_status', arguments: { taskId } });
    expect((handed._meta as Json)[BACKGROUND]).toEqual({ taskId, status: 'working' });
    const text = textOf(handed);
    expect(text).toContain(`task ${taskId}`);
    expect(text).toContain(`call task_status with {"taskId":"${taskId}"}`);
    expect(text).toContain('Do not call slow again');

    const done = await follow(alice, taskId);
    expect(structured(done).status).toBe('completed');
    expect(done.isError).toBeUndefined();
    expect(textOf(done)).toContain('slept 1500 ms');
    expect((structured(done).result as Json).structuredContent).toEqual({ slept: 1_500 });
  });

  it('while a call waits, each new status message is progress when the client asked for it', async () => {
    const reply = await alice.request('tools/call', {
      name: 'slow',
      arguments: { ms: 1_000 },
      _meta: { progressToken: 'p-1' },
    });
    const progress = reply.notifications.filter((n) => n.method === 'notifications/progress');
    expect(progress.map((n) => n.params)).toEqual([
      { progressToken: 'p-1', progress: 1, message: 'Sleeping.' },
    ]);
    await follow(alice, String(structured(reply.result).taskId));
  });

  it('while a call waits, progress the handler reports comes with its total, and a replay never takes it back', async () => {
    const reply = await alice.request('tools/call', {
      name: 'counts',
      arguments: {},
      _meta: { progressToken: 'p-2' },
    });
    expect(textOf(reply.result)).toBe('counted');
    const progress = reply.notifications
      .filter((n) => n.method === 'notifications/progress')
      .map((n) => n.params as Json);
    for (const note of progress) {
      expect(validateMessage({ jsonrpc: '2.0', method: 'notifications/progress', params: note })).toEqual([]);
      expect(note).toMatchObject({ progressToken: 'p-2', total: 2 });
    }
    const values = progress.map((n) => n.progress as number);
    expect(values).toEqual([...new Set(values)].sort((a, b) => a - b));
    expect(progress.at(-1)).toEqual({
      progressToken: 'p-2',
      progress: 2,
      total: 2,
      message: 'Counting (2/2)',
    });
    // Once the task went past 1/2 (to its sleep), the replay after the sleep did not show 1/2 again.
    const messages = progress.map((n) => String(n.message));
    const slept = messages.findIndex((m) => m.startsWith('Sleeping'));
    if (slept >= 0) expect(messages.slice(slept)).not.toContain('Counting (1/2)');
  });

  it('an extension-aware client of the same owner sees the handed-back task with tasks/get', async () => {
    const handed = await call(alice, 'slow', { ms: 800 });
    const taskId = String(structured(handed).taskId);
    const got = await aliceTasks.call('tasks/get', { taskId });
    expect(got.taskId).toBe(taskId);
    expect(['working', 'completed']).toContain(got.status);
    await follow(alice, taskId);
    const after = await aliceTasks.call('tasks/get', { taskId });
    expect(after.status).toBe('completed');
    expect(textOf(after.result as Json)).toBe('slept 800 ms');
  });

  it('a client that cannot answer input gets the questions, and task_respond answers them', async () => {
    const handed = await call(alice, 'asks');
    const handle = structured(handed);
    expect(handle.status).toBe('input_required');
    const taskId = String(handle.taskId);
    expect(Object.keys(handle.inputRequests as Json)).toEqual(['go_ahead']);
    const next = handle.next as { tool: string; arguments: Json };
    expect(next.tool).toBe('task_respond');
    expect(next.arguments).toEqual({
      taskId,
      inputResponses: {
        go_ahead: {
          action: { placeholder: 'the user\'s choice: "accept", "decline" or "cancel"' },
          content: { ok: { placeholder: "the user's answer: ok (boolean, required)" } },
        },
      },
    });
    expect(textOf(handed)).toContain('Go ahead? Fields: ok (boolean, required).');

    // task_status shows the same questions; `next` sent as it is answers nothing.
    const status = await call(alice, 'task_status', { taskId });
    expect(structured(status).inputRequests).toEqual(handle.inputRequests);
    const verbatim = await call(alice, next.tool, next.arguments);
    expect(verbatim.isError).toBe(true);
    expect(textOf(verbatim)).toContain('Ask the user');
    // Filled in with the user's answer, it finishes the task.
    const answered = await call(alice, next.tool, {
      taskId,
      inputResponses: { go_ahead: { action: 'accept', content: { ok: true } } },
    });
    expect(structured(answered).status).toBe('completed');
    expect(textOf(answered)).toContain('went ahead');
  });

  it('task_respond ignores keys the task does not wait for, and says so', async () => {
    const handed = await call(alice, 'asks');
    const taskId = String(structured(handed).taskId);
    const result = await call(alice, 'task_respond', {
      taskId,
      inputResponses: { other: { action: 'accept', content: {} } },
    });
    expect(textOf(result)).toContain('Not waiting for "other": ignored.');
    expect(structured(result).status).toBe('input_required');
    const bad = await call(alice, 'task_respond', {
      taskId,
      inputResponses: { go_ahead: { action: 'maybe' } },
    });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toContain('answer to "go_ahead": action: ');
    expect(textOf(bad)).toContain(`Nothing was recorded and task ${taskId} still waits.`);
    await call(alice, 'task_cancel', { taskId });
  });

  it('task_respond with arguments that break its inputSchema is -32602, and the task still waits', async () => {
    const handed = await call(alice, 'asks');
    const taskId = String(structured(handed).taskId);
    for (const args of [
      { taskId, inputResponses: 'yes' },
      { taskId, inputResponses: { go_ahead: 'yes' } },
      { inputResponses: { go_ahead: { action: 'accept', content: { ok: true } } } },
    ]) {
      const refused = await call(alice, 'task_respond', args).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refused).toBeInstanceOf(ProtocolError);
      expect((refused as ProtocolError).code).toBe(-32602);
      expect((refused as ProtocolError).message).toMatch(/^Invalid arguments for tool task_respond: /);
    }
    expect(structured(await call(alice, 'task_status', { taskId })).status).toBe('input_required');
    await call(alice, 'task_cancel', { taskId });
  });

  it('a client that can answer input gets MRTR rounds on the same call', async () => {
    const first = await call(aliceAsks, 'asks');
    expect(first.resultType).toBe('input_required');
    expect(Object.keys(first.inputRequests as Json)).toEqual(['go_ahead']);
    const second = await aliceAsks.call('tools/call', {
      name: 'asks',
      arguments: {},
      requestState: first.requestState,
      inputResponses: { go_ahead: { action: 'accept', content: { ok: true } } },
    });
    expect(second.resultType).toBe('complete');
    expect(textOf(second)).toBe('went ahead');
    // The state names the task for this caller, tool and arguments only.
    const replay = await bob
      .call('tools/call', { name: 'asks', arguments: {}, requestState: first.requestState })
      .catch((e: unknown) => e);
    expect(replay).toBeInstanceOf(ProtocolError);
    expect((replay as ProtocolError).code).toBe(-32602);
  });

  it('task_cancel stops a running task', async () => {
    const handed = await call(alice, 'slow', { ms: 10_000 });
    const taskId = String(structured(handed).taskId);
    const cancelled = await call(alice, 'task_cancel', { taskId });
    expect(structured(cancelled).status).toBe('cancelled');
    expect(textOf(cancelled)).toContain('was cancelled');
    expect(structured(await call(alice, 'task_status', { taskId })).status).toBe('cancelled');
  });

  it("another principal's task id is unknown to all three facade tools, like an unknown one", async () => {
    const handed = await call(alice, 'asks');
    const taskId = String(structured(handed).taskId);
    const unknown = `task_${'A'.repeat(taskId.length - 5)}`;
    for (const tool of ['task_status', 'task_respond', 'task_cancel']) {
      const args = (id: string): Json =>
        tool === 'task_respond'
          ? { taskId: id, inputResponses: { go_ahead: { action: 'decline' } } }
          : { taskId: id };
      const foreign = await call(bob, tool, args(taskId));
      const missing = await call(bob, tool, args(unknown));
      expect(foreign.isError).toBe(true);
      expect(textOf(foreign)).toBe(textOf(missing).replace(unknown, taskId));
      expect(textOf(foreign)).toContain('Task not found');
    }
    // Nothing bob did reached alice's task.
    expect(structured(await call(alice, 'task_status', { taskId })).status).toBe('input_required');
    await call(alice, 'task_cancel', { taskId });
  });

  it('a thrown error reaches the caller as the tool error it is, in time or through task_status', async () => {
    const result = await call(alice, 'throws');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('the disk is full');
  });

  it('required tools answer -32021 unless they opt in; opted-out tools run synchronously', async () => {
    const refused = await call(alice, 'only_task').catch((e: unknown) => e);
    expect((refused as ProtocolError).code).toBe(-32021);
    const handed = await call(alice, 'only_task_opted_in');
    expect(structured(handed).status).toBe('working');
    const done = await follow(alice, String(structured(handed).taskId));
    expect(textOf(done)).toContain('handed back, then done');
    expect(textOf(await call(alice, 'kept_sync'))).toBe('sync undefined');
  });

  it('lists the facade and widened output schemas to such clients only', async () => {
    const plainList = await alice.call('tools/list');
    const plain = plainList.tools as Json[];
    const aware = (await aliceTasks.call('tools/list')).tools as Json[];
    const names = (list: Json[]) => list.map((t) => t.name);
    expect(names(plain)).toEqual(expect.arrayContaining(['task_status', 'task_respond', 'task_cancel']));
    expect(names(aware)).not.toContain('task_status');
    expect(names(aware).length).toBe(names(plain).length - 3);
    const slowPlain = plain.find((t) => t.name === 'slow') as Json;
    const slowAware = aware.find((t) => t.name === 'slow') as Json;
    expect(slowAware.outputSchema).toEqual(tools[1]?.outputSchema);
    expect((slowPlain.outputSchema as Json).anyOf).toHaveLength(2);
    expect(validateMessage({ jsonrpc: '2.0', id: 1, result: plainList }, 'tools/list')).toEqual([]);
  });
});

describe('a 2025-11-25 session without params.task', () => {
  let legacy: LegacyClient;
  let legacyAsks: LegacyClient;
  beforeAll(async () => {
    legacy = await legacyConnect(server.url, { authorization: 'Bearer alice-token' }, {});
    legacyAsks = await legacyConnect(
      server.url,
      { authorization: 'Bearer alice-token' },
      { elicitation: {} },
    );
  });

  it('hands a slow call back and follows it with task_status', async () => {
    const quick = await legacy.result('tools/call', { name: 'quick', arguments: { word: 'old' } });
    expect(textOf(quick)).toBe('quick old');
    const handed = await legacy.result('tools/call', { name: 'slow', arguments: { ms: 900 } });
    const taskId = String(structured(handed).taskId);
    expect(structured(handed).status).toBe('working');
    let status: Json = {};
    for (let i = 0; i < 20 && structured(status)?.status !== 'completed'; i++) {
      status = await legacy.result('tools/call', { name: 'task_status', arguments: { taskId } });
    }
    expect(textOf(status)).toContain('slept 900 ms');
    // The same task, through the legacy tasks methods of the session.
    const task = await legacy.result('tasks/get', { taskId });
    expect(task.status).toBe('completed');
  });

  it('cancels a handed-back task with task_cancel, and keeps it from other principals', async () => {
    const handed = await legacy.result('tools/call', { name: 'slow', arguments: { ms: 10_000 } });
    const taskId = String(structured(handed).taskId);
    const bobLegacy = await legacyConnect(server.url, { authorization: 'Bearer bob-token' }, {});
    const denied = await bobLegacy.result('tools/call', { name: 'task_cancel', arguments: { taskId } });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toContain('Task not found');
    const cancelled = await legacy.result('tools/call', { name: 'task_cancel', arguments: { taskId } });
    expect(structured(cancelled).status).toBe('cancelled');
    expect((await legacy.result('tasks/get', { taskId })).status).toBe('cancelled');
  });

  it('answers input through task_respond, or through the session when the client declared elicitation', async () => {
    const handed = await legacy.result('tools/call', { name: 'asks', arguments: {} });
    const next = structured(handed).next as { tool: string; arguments: Json };
    const verbatim = await legacy.result('tools/call', { name: next.tool, arguments: next.arguments });
    expect(verbatim.isError).toBe(true);
    expect(textOf(verbatim)).toContain('Ask the user');
    const taskId = String(structured(handed).taskId);
    const answers = { go_ahead: { action: 'accept', content: { ok: true } } };
    const done = await legacy.result('tools/call', {
      name: next.tool,
      arguments: { taskId, inputResponses: answers },
    });
    expect(textOf(done)).toContain('went ahead');

    const stream = await legacyAsks.open('tools/call', { name: 'asks', arguments: {} });
    const ask = (await stream.next(5_000)) as Json;
    expect(ask.method).toBe('elicitation/create');
    await legacyAsks.answer(ask.id, { action: 'accept', content: { ok: true } });
    const response = (await stream.next(5_000)) as Json;
    expect(textOf(response.result as Json)).toBe('went ahead');
    stream.close();
  });
});
