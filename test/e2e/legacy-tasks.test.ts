// Legacy 2025-11-25 tasks on the shared endpoint and store: params.task creation, nested results, tasks/get, list,
// cancel and result (blocking, resumable windows, input as server→client requests), isolation, and the SEP-2663 matrix.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import conformance from '../../examples/conformance/index.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';
import { legacyConnect, tokenAuthenticator, type LegacyClient } from '../support/legacy-client.js';
import { validateLegacy } from '../support/legacy-schema.js';
import { validateMessage } from '../support/schema.js';
import { buildRequest, parseSse, post } from '../support/server.js';

const TASKS_EXT = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const ALICE = { authorization: 'Bearer alice-token' };
const BOB = { authorization: 'Bearer bob-token' };
const RELATED = 'io.modelcontextprotocol/related-task';
type Json = Record<string, unknown>;

let server: DurableTestServer;
let alice: LegacyClient;
let bob: LegacyClient;

beforeAll(async () => {
  server = await startDurableServer({
    toolSets: [conformance],
    authenticator: tokenAuthenticator({
      'alice-token': { tenant: 'acme', principal: 'alice' },
      'bob-token': { tenant: 'acme', principal: 'bob' },
    }),
    legacy: { resultWaitMs: 400, cancelWaitMs: 3_000, pageSize: 3 },
  });
  alice = await legacyConnect(server.url, ALICE);
  bob = await legacyConnect(server.url, BOB);
});
afterAll(async () => {
  await server.close();
});

const taskOf = (result: Json): Json => result.task as Json;

async function createTask(client: LegacyClient, name: string, args: Json = {}): Promise<Json> {
  const result = await client.result('tools/call', { name, arguments: args, task: { ttl: 60_000 } });
  return taskOf(result);
}

async function until(client: LegacyClient, taskId: string, status: string, ms = 5_000): Promise<Json> {
  const deadline = Date.now() + ms;
  for (;;) {
    const task = await client.result('tasks/get', { taskId });
    if (task.status === status) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} still ${String(task.status)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('legacy task creation', () => {
  it('advertises the legacy tasks capability and execution.taskSupport per tool', async () => {
    const init = await post(
      server.url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } },
      },
      ALICE,
    );
    expect(validateLegacy(init.messages[0], 'initialize')).toEqual([]);
    const caps = (init.messages[0] as { result: { capabilities: Json } }).result.capabilities;
    expect(caps.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    expect(caps.extensions).toBeUndefined();
    const { tools } = (await alice.result('tools/list')) as { tools: Json[] };
    const support = Object.fromEntries(
      tools.map((t) => [t.name, (t.execution as Json | undefined)?.taskSupport]),
    );
    expect(support).toMatchObject({
      greet: undefined,
      slow_compute: 'optional',
      failing_job: 'required',
      confirm_delete: 'optional',
    });
  });

  it('answers params.task with a nested working task carrying ttl and pollInterval', async () => {
    const { response } = await alice.request('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0.2 },
      task: { ttl: 60_000 },
    });
    const task = taskOf(response.result as Json);
    expect(Object.keys(response.result as Json)).toEqual(['task']);
    expect(task).toMatchObject({ status: 'working', ttl: 600_000, pollInterval: 200 });
    expect(typeof task.taskId).toBe('string');
    expect(Date.parse(task.createdAt as string)).not.toBeNaN();
    expect(Date.parse(task.lastUpdatedAt as string)).not.toBeNaN();
  });

  it('runs an optional tool synchronously without params.task, and refuses mismatches with -32601', async () => {
    const sync = await alice.result('tools/call', { name: 'slow_compute', arguments: { seconds: 0 } });
    expect(sync.task).toBeUndefined();
    expect(sync.content).toEqual([{ type: 'text', text: 'Computed result in 0 s' }]);
    expect(
      (await alice.error('tools/call', { name: 'greet', arguments: { name: 'x' }, task: {} })).code,
    ).toBe(-32601);
    expect((await alice.error('tools/call', { name: 'failing_job', arguments: {} })).code).toBe(-32601);
  });
});

describe('legacy tasks/get and tasks/result', () => {
  it('reports completion; tasks/result returns the tool result tagged with related-task', async () => {
    const task = await createTask(alice, 'slow_compute', { seconds: 0.1, label: 'x' });
    const done = await until(alice, task.taskId as string, 'completed');
    expect(done).toMatchObject({ taskId: task.taskId, ttl: 600_000, pollInterval: 200 });
    expect(done.result).toBeUndefined();
    const result = await alice.result('tasks/result', { taskId: task.taskId });
    expect(result.content).toEqual([{ type: 'text', text: 'Computed x in 0.1 s' }]);
    expect((result._meta as Json)[RELATED]).toEqual({ taskId: task.taskId });
  });

  it('reports a tool error as a failed task whose tasks/result is the isError result', async () => {
    const task = await createTask(alice, 'failing_job');
    await until(alice, task.taskId as string, 'failed');
    const result = await alice.result('tasks/result', { taskId: task.taskId });
    expect(result.isError).toBe(true);
  });

  it('answers tasks/result of a task that failed with a JSON-RPC error with that error', async () => {
    const task = await createTask(alice, 'protocol_error_job');
    await until(alice, task.taskId as string, 'failed');
    const error = await alice.error('tasks/result', { taskId: task.taskId });
    expect(error).toMatchObject({ code: -32603, message: 'Simulated protocol error in the job' });
  });

  it('blocks until the task ends: each stream window closes with an event id and retry, and GET resumes it', async () => {
    const task = await createTask(alice, 'slow_compute', { seconds: 1.2 });
    const taskId = task.taskId as string;
    const started = Date.now();
    const first = await rawStream(server.url, 'POST', alice.headers, {
      jsonrpc: '2.0',
      id: 'wait-1',
      method: 'tasks/result',
      params: { taskId },
    });
    // The 400 ms window ends before the task: no response and no error, an id to resume from and a retry hint.
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(first.messages).toEqual([]);
    expect(first.retry).toBeGreaterThan(0);
    expect(first.lastEventId).toMatch(/^tr1\./);
    let lastEventId = first.lastEventId as string;
    let final: Json | undefined;
    for (let window = 0; window < 20 && final === undefined; window++) {
      const resumed = await rawStream(server.url, 'GET', { ...alice.headers, 'last-event-id': lastEventId });
      expect(resumed.status).toBe(200);
      final = resumed.messages[0];
      lastEventId = resumed.lastEventId ?? lastEventId;
    }
    expect(validateLegacy(final, 'tasks/result')).toEqual([]);
    expect(final?.id).toBe('wait-1');
    expect((final?.result as Json).content).toEqual([{ type: 'text', text: 'Computed result in 1.2 s' }]);
    // The final event's id ends the chain: resuming from it opens nothing.
    expect(lastEventId).toBe('tr1-done');
    const after = await rawStream(server.url, 'GET', { ...alice.headers, 'last-event-id': lastEventId });
    expect(after.status).toBe(405);
    // Someone else resuming the wait learns nothing: the task is not theirs.
    const stolen = await rawStream(server.url, 'GET', {
      ...bob.headers,
      'last-event-id': first.lastEventId ?? '',
    });
    expect(stolen.messages[0]?.error).toMatchObject({ code: -32602 });
    // …on a stream whose last id leaves nothing to resume, so that the client does not reconnect again and again.
    expect(stolen.lastEventId).toBe('tr1-done');
  });

  it('tells a client that takes no event stream to call again after the window; a later call gets the result', async () => {
    const task = await createTask(alice, 'slow_compute', { seconds: 1.2 });
    const jsonOnly = { ...alice.headers, accept: 'application/json' };
    const call = () =>
      post(
        server.url,
        { jsonrpc: '2.0', id: 'j', method: 'tasks/result', params: { taskId: task.taskId } },
        jsonOnly,
      );
    const started = Date.now();
    const first = await call();
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(first.headers.get('content-type')).toMatch(/^application\/json/);
    const error = (first.messages[0] as Json).error as Json;
    expect(error.code).toBe(-32603);
    expect(error.data).toEqual({ taskId: task.taskId, retry: true });
    let result: Json | undefined;
    for (let attempt = 0; attempt < 10 && result === undefined; attempt++) {
      const response = (await call()).messages[0] as Json;
      if ('result' in response) result = response.result as Json;
    }
    expect(result?.content).toEqual([{ type: 'text', text: 'Computed result in 1.2 s' }]);
  });

  it('delivers mid-task input as server→client requests on the tasks/result stream, answered into the task', async () => {
    const task = await createTask(alice, 'multi_input');
    const taskId = task.taskId as string;
    await until(alice, taskId, 'input_required');
    const stream = await alice.open('tasks/result', { taskId });
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const asked = [(await stream.next(3_000)) as Json, (await stream.next(3_000)) as Json];
    for (const request of asked) {
      expect(validateLegacy(request, 'tasks/result')).toEqual([]);
      expect(request.method).toBe('elicitation/create');
      expect(typeof request.id).toBe('string');
      expect(((request.params as Json)._meta as Json)[RELATED]).toEqual({ taskId });
    }
    const messages = asked.map((r) => (r.params as Json).message).sort();
    expect(messages).toEqual(['First question: proceed?', 'Second question: really proceed?']);
    // One answer: the task keeps waiting for the other key only.
    expect(await alice.answer(asked[0]?.id, { action: 'accept', content: { confirm: true } })).toBe(202);
    await expect.poll(async () => Object.keys(await outstanding(taskId)).length).toBe(1);
    expect(await alice.answer(asked[1]?.id, { action: 'accept', content: { confirm: true } })).toBe(202);
    const final = (await stream.next(5_000)) as Json;
    stream.close();
    expect(validateLegacy(final, 'tasks/result')).toEqual([]);
    expect((final.result as Json).content).toEqual([{ type: 'text', text: 'Answered 2 questions' }]);
    expect((await alice.result('tasks/get', { taskId })).status).toBe('completed');
  });
});

/** The task's outstanding input keys, through the modern wire (same owner). */
async function outstanding(taskId: string): Promise<Json> {
  const req = buildRequest('tasks/get', { taskId }, { caps: TASKS_EXT, headers: ALICE });
  const res = await post(server.url, req.body, req.headers);
  const result = (res.messages[0] as { result: Json }).result;
  return (result.inputRequests as Json | undefined) ?? {};
}

describe('legacy tasks/list and tasks/cancel', () => {
  it("pages through only the caller's tasks, oldest first, with an opaque cursor", async () => {
    const carol = await legacyConnect(server.url, ALICE);
    const before = await listAll(carol);
    const created: string[] = [];
    for (let i = 0; i < 4; i++)
      created.push((await createTask(alice, 'slow_compute', { seconds: 0 })).taskId as string);
    const bobs = (await createTask(bob, 'slow_compute', { seconds: 0 })).taskId as string;
    const pages: Json[] = [];
    const ids = await listAll(carol, pages);
    expect(ids.slice(before.length)).toEqual(created);
    expect(ids).not.toContain(bobs);
    expect(pages.every((p) => (p.tasks as Json[]).length <= 3)).toBe(true);
    expect(pages.slice(0, -1).every((p) => typeof p.nextCursor === 'string')).toBe(true);
    expect(pages[pages.length - 1]?.nextCursor).toBeUndefined();
    expect(await listAll(bob)).toEqual([bobs]);
    expect((await alice.error('tasks/list', { cursor: 'not-a-cursor' })).code).toBe(-32602);
  });

  it('cancels a running task and answers with the cancelled Task; a terminal task gets -32602', async () => {
    const task = await createTask(alice, 'slow_compute', { seconds: 30 });
    const taskId = task.taskId as string;
    await new Promise((r) => setTimeout(r, 200));
    const cancelled = await alice.result('tasks/cancel', { taskId });
    expect(cancelled).toMatchObject({ taskId, status: 'cancelled', ttl: 600_000 });
    expect((await alice.result('tasks/get', { taskId })).status).toBe('cancelled');
    const error = await alice.error('tasks/cancel', { taskId });
    expect(error.code).toBe(-32602);
    expect(error.message).toMatch(/terminal/);
    expect((await alice.error('tasks/result', { taskId })).code).toBe(-32603);
  });
});

async function listAll(client: LegacyClient, pages: Json[] = []): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const result = await client.result('tasks/list', cursor === undefined ? {} : { cursor });
    pages.push(result);
    ids.push(...(result.tasks as Json[]).map((t) => t.taskId as string));
    cursor = result.nextCursor as string | undefined;
    if (cursor === undefined) break;
  }
  return ids;
}

describe('isolation on the legacy wire', () => {
  it("answers another principal's task exactly like a task that never existed, on every method", async () => {
    const theirs = (await createTask(bob, 'slow_compute', { seconds: 30 })).taskId as string;
    const never = 'task_' + 'x'.repeat(20);
    const mine = (await createTask(alice, 'slow_compute', { seconds: 0 })).taskId as string;
    const neverShaped = theirs.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a'));
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      const foreign = await alice.request(method, { taskId: theirs });
      const missing = await alice.request(method, { taskId: neverShaped });
      expect(foreign.status).toBe(missing.status);
      expect(strip(foreign.response)).toEqual(strip(missing.response));
      expect((foreign.response.error as Json).code).toBe(-32602);
      // A malformed id is refused the same way for everyone.
      expect((await alice.request(method, { taskId: never })).response.error).toMatchObject({ code: -32602 });
    }
    expect(await listAll(alice)).not.toContain(theirs);
    expect(await listAll(alice)).toContain(mine);
    expect((await bob.result('tasks/get', { taskId: theirs })).status).toBe('working');
    await bob.result('tasks/cancel', { taskId: theirs });
  });

  it("cannot use another principal's session: it looks like no session at all", async () => {
    const stolen = await post(
      server.url,
      { jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} },
      { ...BOB, 'mcp-session-id': alice.sessionId, 'mcp-protocol-version': '2025-11-25' },
    );
    const random = await post(
      server.url,
      { jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} },
      { ...BOB, 'mcp-session-id': 'no-such-session', 'mcp-protocol-version': '2025-11-25' },
    );
    expect(stolen.status).toBe(random.status);
    expect(stolen.text).toBe(random.text);
    expect(stolen.status).toBe(404); // so that a client initializes again
  });
});

const strip = (response: Json): Json => ({ ...response, id: undefined });

describe('SEP-2663 on the modern wire', () => {
  async function modern(
    method: string,
    params: Json,
    caps: Json = {},
  ): Promise<{ status: number; msg: Json }> {
    const req = buildRequest(method, params, { caps, headers: ALICE });
    const res = await post(server.url, req.body, req.headers);
    const msg = res.messages[0] as Json;
    expect(validateMessage(msg, { method, tasksNegotiated: 'extensions' in caps })).toEqual([]);
    return { status: res.status, msg };
  }
  const LEGACY_CAPS = { tasks: { requests: { elicitation: { create: {} } } }, elicitation: {} };

  it('treats a client declaring only the legacy tasks capability as non-declaring', async () => {
    const optional = await modern(
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 0 } },
      LEGACY_CAPS,
    );
    expect((optional.msg.result as Json).resultType).toBe('complete');
    const required = await modern('tools/call', { name: 'failing_job', arguments: {} }, LEGACY_CAPS);
    expect(required.status).toBe(400);
    expect((required.msg.error as Json).code).toBe(-32021);
    const task = await createTask(alice, 'slow_compute', { seconds: 0 });
    const get = await modern('tasks/get', { taskId: task.taskId }, LEGACY_CAPS);
    expect((get.msg.error as Json).code).toBe(-32021);
  });

  it('answers tasks/result (and tasks/list) with -32601', async () => {
    const task = await createTask(alice, 'slow_compute', { seconds: 0 });
    for (const method of ['tasks/result', 'tasks/list']) {
      const res = await modern(method, { taskId: task.taskId }, TASKS_EXT);
      expect(res.status).toBe(404);
      expect((res.msg.error as Json).code).toBe(-32601);
    }
  });

  it('ignores a legacy task param: sync without the extension, the flat modern task with it', async () => {
    const params = { name: 'slow_compute', arguments: { seconds: 0 }, task: { ttl: 1_000, pollInterval: 5 } };
    const sync = await modern('tools/call', params);
    expect((sync.msg.result as Json).resultType).toBe('complete');
    const created = (await modern('tools/call', params, TASKS_EXT)).msg.result as Json;
    expect(created).toMatchObject({ resultType: 'task', ttlMs: 600_000, pollIntervalMs: 200 });
    expect(created.task).toBeUndefined();
  });

  it('lets a modern request of the same owner read a task created on the legacy wire', async () => {
    const task = await createTask(alice, 'slow_compute', { seconds: 0 });
    await until(alice, task.taskId as string, 'completed');
    const got = (await modern('tasks/get', { taskId: task.taskId }, TASKS_EXT)).msg.result as Json;
    expect(got).toMatchObject({ taskId: task.taskId, status: 'completed', resultType: 'complete' });
  });
});

/** One whole SSE response: its messages, the last event id and retry field it carried. */
async function rawStream(
  url: string,
  method: 'GET' | 'POST',
  headers: Record<string, string>,
  body?: Json,
): Promise<{ status: number; messages: Json[]; lastEventId?: string; retry?: number }> {
  const res = await fetch(url, {
    method,
    headers: {
      ...headers,
      accept: method === 'GET' ? 'text/event-stream' : 'application/json, text/event-stream',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    return { status: res.status, messages: text === '' ? [] : [JSON.parse(text) as Json] };
  }
  const ids = [...text.matchAll(/^id: (.*)$/gm)].map((m) => m[1] as string);
  const retry = /^retry: (\d+)$/m.exec(text)?.[1];
  return {
    status: res.status,
    messages: parseSse(text).messages as Json[],
    lastEventId: ids[ids.length - 1],
    retry: retry === undefined ? undefined : Number(retry),
  };
}
