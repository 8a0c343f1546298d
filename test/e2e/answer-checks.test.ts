// Answers are checked against their questions on every path over real HTTP, before anything is consumed: a refused
// answer leaves the task (or the MRTR round) waiting for a corrected one, and a hand-back's `next`, sent as it is,
// answers nothing for any input method.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtocolError } from '../../src/client/index.js';
import { createHttpClient, type McpHttpClient } from '../../src/advanced.js';
import { defineTool, textResult, type InputRequest, type ToolDefinition } from '../../src/index.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';
import { legacyConnect, tokenAuthenticator } from '../support/legacy-client.js';
import { post } from '../support/server.js';

type Json = Record<string, unknown>;

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const ALICE = { authorization: 'Bearer alice-token' };

const approve: InputRequest = {
  method: 'elicitation/create',
  params: {
    message: 'Approve the outline?',
    requestedSchema: {
      type: 'object',
      properties: { approved: { type: 'boolean', default: true } },
      required: ['approved'],
    },
  },
};
const QUESTIONS: Record<string, InputRequest> = {
  form: approve,
  url: {
    method: 'elicitation/create',
    params: { mode: 'url', message: 'Sign in', url: 'https://example.com/login' },
  },
  sampling: {
    method: 'sampling/createMessage',
    params: { messages: [{ role: 'user', content: { type: 'text', text: 'Summarise' } }], maxTokens: 20 },
  },
  roots: { method: 'roots/list' },
};
const GOOD_ANSWERS: Record<'form' | 'url' | 'sampling' | 'roots', Json> = {
  form: { action: 'accept', content: { approved: true } },
  url: { action: 'accept' },
  sampling: { role: 'assistant', content: { type: 'text', text: 'A summary' }, model: 'm' },
  roots: { roots: [{ uri: 'file:///srv/reports', name: 'reports' }] },
};

/** One tool per input method: asks its question, then reports the answer it got. */
const tools: ToolDefinition<never>[] = Object.entries(QUESTIONS).map(([kind, question]) =>
  defineTool({
    name: `ask_${kind}`,
    inputSchema: { type: 'object', properties: {} },
    task: { support: 'optional' },
    handler: (_args, ctx) => textResult(`got ${JSON.stringify(ctx.input('q', question))}`),
  }),
);
tools.push(
  defineTool({
    name: 'ask_now',
    inputSchema: { type: 'object', properties: {} },
    handler: (_args, ctx) => textResult(`got ${JSON.stringify(ctx.input('q', approve))}`),
  }),
);

let server: DurableTestServer;
const client = (capabilities: Json = {}): McpHttpClient =>
  createHttpClient({ url: server.url, token: 'alice-token', capabilities });
let plain: McpHttpClient;
let aware: McpHttpClient;
let asks: McpHttpClient;

beforeAll(async () => {
  server = await startDurableServer({
    toolSets: [{ tools }],
    authenticator: tokenAuthenticator({ 'alice-token': { tenant: 'acme', principal: 'alice' } }),
    tasks: { tasksGetRate: false, defaultPollIntervalMs: 50, fallback: { budgetMs: 300 } },
  });
  plain = client();
  aware = client({ ...TASKS, elicitation: {}, sampling: {}, roots: {} });
  asks = client({ elicitation: {} });
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
const status = async (taskId: string): Promise<Json> => aware.call('tasks/get', { taskId });
const refusal = async (p: Promise<unknown>): Promise<ProtocolError> => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProtocolError);
  return err as ProtocolError;
};

describe("a hand-back's next call, sent as it is", () => {
  it.each(['form', 'url', 'sampling', 'roots'] as const)(
    'answers nothing for a %s request: the task keeps waiting and the model is told to ask the user',
    async (kind) => {
      const handed = await call(plain, `ask_${kind}`);
      const handle = handed.structuredContent as Json;
      expect(handle.status).toBe('input_required');
      const taskId = String(handle.taskId);
      const next = handle.next as { tool: string; arguments: Json };
      expect(next.tool).toBe('task_respond');

      const verbatim = await call(plain, next.tool, next.arguments);
      expect(verbatim.isError).toBe(true);
      expect(textOf(verbatim)).toContain('a placeholder, not an answer');
      expect(textOf(verbatim)).toContain('Ask the user');
      expect((await status(taskId)).status).toBe('input_required');

      const answered = await call(plain, 'task_respond', {
        taskId,
        inputResponses: { q: GOOD_ANSWERS[kind] },
      });
      expect((answered.structuredContent as Json).status).toBe('completed');
      expect(textOf(answered)).toContain(`got ${JSON.stringify(GOOD_ANSWERS[kind])}`);
    },
  );
});

describe('tasks/update', () => {
  it('refuses a whole update over one bad answer with -32602 naming the key and field; the task keeps waiting', async () => {
    const created = await call(aware, 'ask_form');
    expect(created.resultType).toBe('task');
    const taskId = String(created.taskId);
    for (let i = 0; i < 100 && (await status(taskId)).status !== 'input_required'; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const err = await refusal(
      aware.call('tasks/update', {
        taskId,
        inputResponses: { q: { action: 'accept', content: { approved: 'yes' } } },
      }),
    );
    expect(err.code).toBe(-32602);
    expect(err.message).toBe(
      'Invalid params: answer to "q": content.approved: expected true or false, got "yes".',
    );
    expect(err.data).toEqual({
      inputKey: 'q',
      field: 'content.approved',
      reason: 'expected true or false, got "yes"',
    });
    const waiting = await status(taskId);
    expect(waiting.status).toBe('input_required');
    expect(Object.keys(waiting.inputRequests as Json)).toEqual(['q']);

    // The question can still be answered, correctly this time.
    await aware.call('tasks/update', { taskId, inputResponses: { q: GOOD_ANSWERS.form } });
    let done = await status(taskId);
    for (let i = 0; i < 100 && done.status !== 'completed'; i++) {
      await new Promise((r) => setTimeout(r, 20));
      done = await status(taskId);
    }
    expect(textOf(done.result as Json)).toBe(`got ${JSON.stringify(GOOD_ANSWERS.form)}`);
  });
});

describe('MRTR rounds', () => {
  it('a refused answer does not use up the one-time requestState of a call without a task', async () => {
    const first = await call(asks, 'ask_now');
    expect(first.resultType).toBe('input_required');
    const retry = (answer: Json): Promise<Json> =>
      asks.call('tools/call', {
        name: 'ask_now',
        arguments: {},
        requestState: first.requestState,
        inputResponses: { q: answer },
      });
    const err = await refusal(retry({ action: 'accept', content: { approved: 'yes' } }));
    expect(err.code).toBe(-32602);
    expect(err.data).toMatchObject({ inputKey: 'q', field: 'content.approved' });
    const second = await retry(GOOD_ANSWERS.form);
    expect(second.resultType).toBe('complete');
    expect(textOf(second)).toBe(`got ${JSON.stringify(GOOD_ANSWERS.form)}`);
    // Now it is used.
    expect((await refusal(retry(GOOD_ANSWERS.form))).message).toContain('already used');
  });

  it('an answer sent before it was asked, that does not answer the question, is asked again', async () => {
    const first = await asks.call('tools/call', {
      name: 'ask_now',
      arguments: {},
      inputResponses: { q: { action: 'accept', content: { approved: 'yes' } } },
    });
    expect(first.resultType).toBe('input_required');
    expect(first.inputRequests).toEqual({ q: approve });
  });

  it('a refused answer to a task asked as MRTR rounds leaves the task waiting', async () => {
    const first = await call(asks, 'ask_form');
    expect(first.resultType).toBe('input_required');
    const retry = (answer: Json): Promise<Json> =>
      asks.call('tools/call', {
        name: 'ask_form',
        arguments: {},
        requestState: first.requestState,
        inputResponses: { q: answer },
      });
    const err = await refusal(retry({ action: 'maybe' }));
    expect(err.data).toMatchObject({ inputKey: 'q', field: 'action' });
    const second = await retry(GOOD_ANSWERS.form);
    expect(textOf(second)).toBe(`got ${JSON.stringify(GOOD_ANSWERS.form)}`);
  });
});

describe('the 2025-11-25 wire, where answers are JSON-RPC responses', () => {
  const bad = { action: 'accept', content: { approved: 'yes' } };

  it("refuses a task's bad answer with 400 naming the key, and sends the request again", async () => {
    const legacy = await legacyConnect(server.url, ALICE);
    const created = await legacy.result('tools/call', {
      name: 'ask_form',
      arguments: {},
      task: { ttl: 60_000 },
    });
    const taskId = String((created.task as Json).taskId);
    for (let i = 0; i < 100 && (await status(taskId)).status !== 'input_required'; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const stream = await legacy.open('tasks/result', { taskId });
    const first = (await stream.next(5_000)) as Json;
    expect(first.method).toBe('elicitation/create');
    const refused = await post(server.url, { jsonrpc: '2.0', id: first.id, result: bad }, legacy.headers);
    expect(refused.status).toBe(400);
    expect((refused.messages[0] as Json).error).toMatchObject({
      code: -32602,
      data: { inputKey: 'q', field: 'content.approved' },
    });
    expect((await status(taskId)).status).toBe('input_required');

    const again = (await stream.next(5_000)) as Json;
    expect(again.method).toBe('elicitation/create');
    expect(again.id).not.toBe(first.id);
    expect(again.params).toMatchObject({ message: 'Approve the outline?' });
    expect(await legacy.answer(again.id, GOOD_ANSWERS.form)).toBe(202);
    const final = (await stream.next(5_000)) as Json;
    stream.close();
    expect(textOf(final.result as Json)).toBe(`got ${JSON.stringify(GOOD_ANSWERS.form)}`);
  });

  it('asks a call without a task again when its answer does not answer the question', async () => {
    const legacy = await legacyConnect(server.url, ALICE);
    const stream = await legacy.open('tools/call', { name: 'ask_now', arguments: {} });
    const first = (await stream.next(5_000)) as Json;
    expect(first.method).toBe('elicitation/create');
    expect(await legacy.answer(first.id, bad)).toBe(202);
    const again = (await stream.next(5_000)) as Json;
    expect(again.method).toBe('elicitation/create');
    expect(again.id).not.toBe(first.id);
    expect(await legacy.answer(again.id, GOOD_ANSWERS.form)).toBe(202);
    const final = (await stream.next(5_000)) as Json;
    stream.close();
    expect(textOf(final.result as Json)).toBe(`got ${JSON.stringify(GOOD_ANSWERS.form)}`);
  });
});
