// Push task updates: subscriptions/listen with taskIds and notifications/tasks, over a real port.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStaticTokenAuthenticator } from '../../src/auth/static-tokens.js';
import {
  createDurableMcp,
  createHttpHandler,
  defineTool,
  listenHttp,
  LOOPBACK_HOSTS,
  textResult,
  type DurableMcp,
  type TaskStore,
} from '../../src/index.js';
import { createPostgresTaskStore, createSqliteTaskStore } from '../../src/advanced.js';
import { TEST_POSTGRES_URL, withPostgres } from '../support/postgres.js';
import { validateMessage } from '../support/schema.js';
import { openSse, type SseReader } from '../support/server.js';

const EXT = 'io.modelcontextprotocol/tasks';
const CAPS = { elicitation: {}, extensions: { [EXT]: {} } };
const SUB = 'io.modelcontextprotocol/subscriptionId';
const ALICE = 'alice-secret-token-0001';
const BOB = 'bob-secret-token-000002';

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });

// working (150 ms) → input_required → working (150 ms) → completed, with gaps so no transition coalesces.
const staged = defineTool({
  name: 'staged',
  description: 'Moves through every task state with pauses',
  task: { support: 'required', pollIntervalMs: 100 },
  handler: async (_a, ctx) => {
    await ctx.step('a', async () => {
      await sleep(150, ctx.signal);
      return 1;
    });
    ctx.input('go', {
      method: 'elicitation/create',
      params: { message: 'go?', requestedSchema: { type: 'object', properties: {} } },
    });
    await ctx.step('b', async () => {
      await sleep(150, ctx.signal);
      return 2;
    });
    return textResult('staged done');
  },
});
const quick = defineTool({
  name: 'quick',
  description: 'Finishes after a short pause',
  inputSchema: { type: 'object', properties: { ms: { type: 'integer' } } },
  task: { support: 'required' },
  handler: async ({ ms }: { ms?: number }, ctx) => {
    await sleep(ms ?? 300, ctx.signal);
    if (ctx.signal.aborted) throw new Error('cancelled');
    return textResult('quick done');
  },
});

let dir: string;
let runtime: DurableMcp;
let url: string;
let closeHttp: () => Promise<void>;
let subscribers = 0;
let id = 1;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'durable-mcp-push-'));
  const tokens = join(dir, 'tokens.json');
  writeFileSync(
    tokens,
    JSON.stringify({
      tokens: [
        { token: ALICE, tenant: 'acme', principal: 'alice' },
        { token: BOB, tenant: 'acme', principal: 'bob' },
      ],
    }),
  );
  const inner = createSqliteTaskStore({ path: join(dir, 'tasks.db') });
  // Count change-feed subscribers so the test can see every subscription let go of its resources.
  const store: TaskStore = Object.create(inner) as TaskStore;
  Object.defineProperty(store, 'changes', {
    value: {
      subscribe(listener: Parameters<NonNullable<TaskStore['changes']>['subscribe']>[0]) {
        subscribers++;
        const off = inner.changes?.subscribe(listener);
        return () => {
          subscribers--;
          off?.();
        };
      },
    },
  });
  runtime = createDurableMcp({
    toolSets: [{ tools: [staged, quick] }],
    store,
    tasks: { tasksGetRate: false },
    worker: { concurrency: 16, pollMs: 50 },
    // One principal opens 1,000 streams below.
    server: { maxListensPerPrincipal: 2_000 },
  });
  const handler = createHttpHandler({
    server: runtime.server,
    authenticator: createStaticTokenAuthenticator(tokens),
    origin: { allowedHosts: LOOPBACK_HOSTS },
    keepAliveMs: 200,
  });
  const running = await listenHttp(handler, '127.0.0.1', 0);
  url = running.url;
  closeHttp = () => running.close(500);
});

afterAll(async () => {
  await closeHttp();
  await runtime.close(500);
  rmSync(dir, { recursive: true, force: true });
});

const headers = (method: string, name: string | undefined, token: string) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': method,
  authorization: `Bearer ${token}`,
  ...(name === undefined ? {} : { 'mcp-name': name }),
});
const body = (
  method: string,
  params: Record<string, unknown>,
  caps: Record<string, unknown> = CAPS,
  rid = id++,
) => ({
  jsonrpc: '2.0',
  id: rid,
  method,
  params: {
    ...params,
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': caps,
    },
  },
});

async function rpc(method: string, params: Record<string, unknown>, token = ALICE, caps = CAPS) {
  const name = method === 'tools/call' ? params.name : params.taskId;
  const res = await fetch(url, {
    method: 'POST',
    headers: headers(method, typeof name === 'string' ? name : undefined, token),
    body: JSON.stringify(body(method, params, caps)),
  });
  return {
    status: res.status,
    json: (await res.json()) as { result?: Record<string, unknown>; error?: { code: number } },
  };
}
const create = async (name: string, args: Record<string, unknown> = {}, token = ALICE) =>
  String((await rpc('tools/call', { name, arguments: args }, token)).json.result?.taskId);

const listen = (
  taskIds: string[],
  token = ALICE,
  listenId: string | number = `listen-${id++}`,
): Promise<SseReader> =>
  openSse(
    url,
    body('subscriptions/listen', { notifications: { taskIds } }, CAPS, listenId as number),
    headers('subscriptions/listen', undefined, token),
  );

type Msg = { method?: string; params?: Record<string, unknown> };
const strip = (o: Record<string, unknown> | undefined) => {
  const { _meta: _m, resultType: _r, ...rest } = o ?? {};
  return rest;
};

/** Every transition of a task, each pushed as the snapshot tasks/get returns, tagged with the subscription id. */
const streamsEveryTransition = async () => {
  const taskId = await create('staged');
  const foreign = await create('quick', { ms: 200 }, BOB);
  const stream = await listen([taskId, foreign, 'garbage', `task_${'Z'.repeat(32)}`], ALICE, 'listen-main');
  expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
  expect(stream.headers.get('x-accel-buffering')).toBe('no');
  const ack = (await stream.next()) as Msg;
  expect(ack.method).toBe('notifications/subscriptions/acknowledged');
  expect(ack.params).toEqual({ notifications: { taskIds: [taskId] }, _meta: { [SUB]: 'listen-main' } });

  const seen: string[] = [];
  for (;;) {
    const msg = (await stream.next(5_000)) as Msg | undefined;
    expect(msg).toBeDefined();
    expect(validateMessage(msg, { tasksNegotiated: true })).toEqual([]);
    expect(msg?.method).toBe('notifications/tasks');
    expect(msg?.params?._meta).toEqual({ [SUB]: 'listen-main' });
    expect(msg?.params?.taskId).toBe(taskId);
    const status = String(msg?.params?.status);
    // The pushed snapshot is exactly what tasks/get says right now (no transition is in flight here).
    const got = await rpc('tasks/get', { taskId });
    if (got.json.result?.status === status) expect(strip(msg?.params)).toEqual(strip(got.json.result));
    if (seen[seen.length - 1] !== status) seen.push(status);
    if (status === 'input_required') {
      expect(Object.keys(msg?.params?.inputRequests as object)).toEqual(['go']);
      await rpc('tasks/update', { taskId, inputResponses: { go: { action: 'accept', content: {} } } });
    }
    if (status === 'completed') break;
  }
  expect(seen).toEqual(['working', 'input_required', 'working', 'completed']);
  // Bob's task finished meanwhile; it never appears, nor any progress/log notification.
  await sleep(300);
  const rest = (await stream.drain(200)) as Msg[];
  expect(rest.every((m) => m.method === 'notifications/tasks' && m.params?.taskId === taskId)).toBe(true);
  stream.close();
};

/** The cancel of a running task (its run ends it) and of one waiting for input (ended at once). */
const streamsACancellation = async () => {
  for (const [tool, before] of [
    ['quick', 'working'],
    ['staged', 'input_required'],
  ] as const) {
    const taskId = await create(tool, { ms: 30_000 });
    const stream = await listen([taskId]);
    expect(((await stream.next()) as Msg).method).toBe('notifications/subscriptions/acknowledged');
    let last: Msg | undefined;
    do last = (await stream.next(5_000)) as Msg | undefined;
    while (last !== undefined && last.params?.status !== before);
    expect(last?.params?.status).toBe(before);
    await rpc('tasks/cancel', { taskId });
    do last = (await stream.next(5_000)) as Msg | undefined;
    while (last !== undefined && last.params?.status !== 'cancelled');
    expect(last?.params?.status).toBe('cancelled');
    expect(strip(last?.params)).toEqual(strip((await rpc('tasks/get', { taskId })).json.result));
    stream.close();
  }
};

describe('notifications/tasks on subscriptions/listen', () => {
  it(
    'acks first, then streams every transition as the snapshot tasks/get returns, tagged with the subscription id',
    streamsEveryTransition,
  );

  it('streams a cancellation', streamsACancellation);

  it('needs the tasks extension for taskIds (-32021), and sends keep-alive comments', async () => {
    const r = await fetch(url, {
      method: 'POST',
      headers: headers('subscriptions/listen', undefined, ALICE),
      body: JSON.stringify(body('subscriptions/listen', { notifications: { taskIds: [] } }, {})),
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { code: number } }).error.code).toBe(-32021);

    const res = await fetch(url, {
      method: 'POST',
      headers: headers('subscriptions/listen', undefined, ALICE),
      body: JSON.stringify(body('subscriptions/listen', { notifications: { taskIds: [] } })),
    });
    const reader = res.body!.getReader();
    let text = '';
    const until = Date.now() + 2_000;
    while (!text.includes(': keep-alive') && Date.now() < until)
      text += new TextDecoder().decode((await reader.read()).value);
    expect(text).toContain(': keep-alive');
    await reader.cancel();
  });

  it('1,000 concurrent subscriptions all see the terminal state, then every resource is released', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    await sleep(100);
    gc();
    const baseHeap = process.memoryUsage().heapUsed;
    const baseSubscribers = subscribers;
    const baseHandles = process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;

    const taskIds = await Promise.all(Array.from({ length: 10 }, () => create('quick', { ms: 1_500 })));
    const streams = await Promise.all(
      Array.from({ length: 1_000 }, (_, i) => listen([taskIds[i % 10] as string])),
    );
    const terminal = await Promise.all(
      streams.map(async (s) => {
        for (;;) {
          const m = (await s.next(10_000)) as Msg | undefined;
          if (m === undefined) return 'timeout';
          if (m.params?.status === 'completed') return 'completed';
        }
      }),
    );
    expect(terminal.filter((t) => t === 'completed')).toHaveLength(1_000);
    expect(subscribers).toBe(baseSubscribers + 1_000);
    for (const s of streams) s.close();
    for (let i = 0; i < 100 && subscribers > baseSubscribers; i++) await sleep(50);
    expect(subscribers).toBe(baseSubscribers);
    for (let i = 0; i < 100; i++) {
      const open = process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;
      if (open <= baseHandles + 5) break;
      await sleep(50);
    }
    expect(process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length).toBeLessThanOrEqual(
      baseHandles + 5,
    );
    streams.length = 0;
    await sleep(100);
    gc();
    expect(process.memoryUsage().heapUsed - baseHeap).toBeLessThan(32 * 1024 * 1024);
  }, 60_000);
});

// On PostgreSQL a change committed by this process carries its snapshot (no read); the events must not differ.
await withPostgres('push from a PostgreSQL store', () => {
  describe('notifications/tasks on subscriptions/listen, PostgreSQL store', () => {
    const schema = `dmcp_push_${randomBytes(5).toString('hex')}`;
    let sqliteUrl: string;
    let pgRuntime: DurableMcp;
    let closePg: () => Promise<void>;

    beforeAll(async () => {
      pgRuntime = createDurableMcp({
        toolSets: [{ tools: [staged, quick] }],
        store: createPostgresTaskStore({ connectionString: TEST_POSTGRES_URL, schema, poolSize: 4 }),
        tasks: { tasksGetRate: false },
        worker: { concurrency: 4, pollMs: 50 },
      });
      const running = await listenHttp(
        createHttpHandler({
          server: pgRuntime.server,
          authenticator: createStaticTokenAuthenticator(join(dir, 'tokens.json')),
          origin: { allowedHosts: LOOPBACK_HOSTS },
        }),
        '127.0.0.1',
        0,
      );
      sqliteUrl = url;
      url = running.url;
      closePg = () => running.close(500);
    });
    afterAll(async () => {
      url = sqliteUrl;
      await closePg();
      await pgRuntime.close(500);
      const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
      await admin.end();
    });

    it(
      'acks first, then streams every transition as the snapshot tasks/get returns, tagged with the subscription id',
      streamsEveryTransition,
    );

    it('streams a cancellation', streamsACancellation);
  });
});

describe('graceful shutdown', () => {
  it('ends an open listen stream with the listen result carrying the subscription id', async () => {
    const own = mkdtempSync(join(tmpdir(), 'durable-mcp-push-close-'));
    const rt = createDurableMcp({
      toolSets: [{ tools: [quick] }],
      store: createSqliteTaskStore({ path: join(own, 'tasks.db') }),
      worker: false,
    });
    const handler = createHttpHandler({
      server: rt.server,
      authenticator: createStaticTokenAuthenticator(join(dir, 'tokens.json')),
      origin: { allowedHosts: LOOPBACK_HOSTS },
    });
    const running = await listenHttp(handler, '127.0.0.1', 0);
    const stream = await openSse(
      running.url,
      body('subscriptions/listen', { notifications: { taskIds: [] } }, CAPS, 'bye' as unknown as number),
      headers('subscriptions/listen', undefined, ALICE),
    );
    expect(((await stream.next()) as Msg).method).toBe('notifications/subscriptions/acknowledged');
    const closing = running.close(2_000);
    await rt.close(200);
    const last = (await stream.next(2_000)) as { id?: unknown; result?: Record<string, unknown> } | undefined;
    expect(last).toEqual({
      jsonrpc: '2.0',
      id: 'bye',
      result: {
        resultType: 'complete',
        _meta: { [SUB]: 'bye', 'io.modelcontextprotocol/serverInfo': expect.any(Object) },
      },
    });
    expect(await stream.next(500)).toBeUndefined();
    await closing;
    rmSync(own, { recursive: true, force: true });
  });
});
