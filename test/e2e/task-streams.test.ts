// Streamed partial results (ctx.stream) over a real port, on both stores: a stream read from offset N, after the
// client reconnected, returns exactly the chunks from N; followers are told of new chunks through resourceSubscriptions
// and follow to the end; a replay after the run was interrupted does not repeat chunks; another principal's read or
// subscription finds nothing, exactly as for a task that does not exist; the task's bound refuses chunks past it.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresTaskStore, createSqliteTaskStore, type BuiltInTaskStore } from '../../src/advanced.js';
import { createClient, ProtocolError, type McpClient } from '../../src/client/index.js';
import { createStaticTokenAuthenticator, defineTool, textResult } from '../../src/index.js';
import { newTaskId } from '../../src/tasks/ids.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';
import { dropSchema, TEST_POSTGRES_URL, withPostgres } from '../support/postgres.js';
import { validateAgainst, validateMessage } from '../support/schema.js';

const gates = new Map<string, () => void>();
const opened = new Set<string>();
/** Resolves once the test opens gate `name`; rejects when `signal` aborts first (the server shutting down). */
const gate = (name: string, signal: AbortSignal): Promise<void> =>
  opened.has(name)
    ? Promise.resolve()
    : new Promise((resolve, reject) => {
        gates.set(name, resolve);
        signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
      });
const open = (name: string): void => {
  opened.add(name);
  gates.get(name)?.();
};
const until = async (what: string, ok: () => boolean | Promise<boolean>): Promise<void> => {
  const end = Date.now() + 15_000;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

const writer = defineTool<{ gate: string }>({
  name: 'writer',
  inputSchema: { type: 'object', properties: { gate: { type: 'string' } }, required: ['gate'] },
  task: { support: 'required' },
  handler: async ({ gate: g }, ctx) => {
    const out = ctx.stream('out');
    for (let i = 0; i < 3; i++) await out.append(`c${i}`);
    await ctx.step('wait', ({ signal }) => gate(g, signal));
    for (let i = 3; i < 5; i++) await out.append(`c${i}`);
    return { content: [{ type: 'text', text: 'written' }, ...out.links()] };
  },
});

const flood = defineTool<Record<string, never>>({
  name: 'flood',
  inputSchema: { type: 'object' },
  task: { support: 'required' },
  handler: async (_args, ctx) => {
    const out = ctx.stream('flood');
    for (let i = 0; i < 10; i++) await out.append(`f${i}`);
    return textResult('not reached');
  },
});

const TOKENS = { alice: randomBytes(24).toString('hex'), bob: randomBytes(24).toString('hex') };
const MAX_CHUNKS = 6;

function streamSuite(name: string, storeOf: (dir: string) => BuiltInTaskStore): void {
  describe(`task streams: ${name}`, () => {
    let server: DurableTestServer;
    let tokens: string;
    let dir: string;
    const clients: McpClient[] = [];
    const clientOf = (token: string): McpClient => {
      const c = createClient({ url: server.url, token });
      clients.push(c);
      return c;
    };
    const start = async (options: { gate?: string } = {}): Promise<string> => {
      const tool = options.gate === undefined ? 'flood' : 'writer';
      const args = options.gate === undefined ? {} : { gate: options.gate };
      const result = await clientOf(TOKENS.alice).request('tools/call', { name: tool, arguments: args });
      expect(result.resultType).toBe('task');
      return String(result.taskId);
    };
    const serve = (): Promise<DurableTestServer> =>
      startDurableServer({
        toolSets: [{ tools: [writer, flood] as never[] }],
        authenticator: createStaticTokenAuthenticator(tokens),
        limits: { maxStreamChunksPerTask: MAX_CHUNKS },
        // A short lease: the run of a server that went away is taken over soon.
        worker: { pollMs: 20, leaseMs: 1_000 },
        store: () => storeOf(dir),
      });

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'durable-mcp-streams-'));
      tokens = join(dir, 'tokens.json');
      writeFileSync(
        tokens,
        JSON.stringify({
          tokens: [
            { token: TOKENS.alice, tenant: 'acme', principal: 'alice' },
            { token: TOKENS.bob, tenant: 'acme', principal: 'bob' },
          ],
        }),
      );
      server = await serve();
    });
    afterAll(async () => {
      await Promise.all(clients.map((c) => c.close()));
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('reads exactly the chunks from offset N after a reconnect, tells subscribers of new ones, and follows to the end', async () => {
      const g = `${name}-read`;
      const taskId = await start({ gate: g });
      const uri = `durable-mcp://tasks/${taskId}/streams/out`;
      const first = clientOf(TOKENS.alice);
      await until('three chunks', async () => (await first.readStream(taskId, 'out')).length === 3);
      await first.close();
      // A new connection, from the offset the last one reached.
      const again = clientOf(TOKENS.alice);
      const raw = await again.request('resources/read', { uri: `${uri}?offset=1` });
      expect(validateAgainst('ReadResourceResult', raw)).toEqual([]);
      expect(raw.contents).toEqual([
        { uri, mimeType: 'text/plain', text: 'c1', _meta: { 'dev.durable-mcp/streamOffset': 1 } },
        { uri, mimeType: 'text/plain', text: 'c2', _meta: { 'dev.durable-mcp/streamOffset': 2 } },
      ]);
      expect((raw._meta as Record<string, unknown>)['dev.durable-mcp/stream']).toEqual({
        nextOffset: 3,
        length: 3,
        ended: false,
      });

      const templates = await again.request('resources/templates/list');
      expect(validateAgainst('ListResourceTemplatesResult', templates)).toEqual([]);
      expect(templates.resourceTemplates).toContainEqual(
        expect.objectContaining({ uriTemplate: 'durable-mcp://tasks/{taskId}/streams/{name}' }),
      );
      const discovered = await again.discover();
      expect((discovered.capabilities as Record<string, unknown>).resources).toEqual({
        subscribe: true,
        listChanged: true,
      });

      // A subscription to the stream's resource hears of the next chunks.
      const heard: Record<string, unknown>[] = [];
      const listening = new AbortController();
      const listen = again
        .request(
          'subscriptions/listen',
          { notifications: { resourceSubscriptions: [uri] } },
          { signal: listening.signal, onNotification: (m) => heard.push(m) },
        )
        .catch(() => undefined);
      await until('the acknowledgement', () => heard.length > 0);
      expect(heard[0]).toMatchObject({
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { resourceSubscriptions: [uri] } },
      });
      const followed: string[] = [];
      const following = (async () => {
        for await (const chunk of again.followStream(taskId, 'out', { from: 3, pollMs: 5_000 }))
          followed.push(`${chunk.offset}:${chunk.text}`);
      })();
      open(g);
      await until('an update', () => heard.some((m) => m.method === 'notifications/resources/updated'));
      const update = heard.find((m) => m.method === 'notifications/resources/updated');
      expect(update?.params).toMatchObject({ uri });
      expect(validateMessage({ jsonrpc: '2.0', ...update })).toEqual([]);
      await following;
      expect(followed).toEqual(['3:c3', '4:c4']);
      listening.abort();
      await listen;
      const end = await again.readStream(taskId, 'out', 0);
      expect(end.chunks.map((c) => c.text)).toEqual(['c0', 'c1', 'c2', 'c3', 'c4']);
      expect(end.ended).toBe(true);
      const task = await again.request('tasks/get', { taskId });
      expect((task.result as { content: unknown[] }).content[1]).toEqual({
        type: 'resource_link',
        uri,
        name: 'out',
        mimeType: 'text/plain',
      });
    });

    it('another principal’s read and subscription find nothing, exactly as for a task that does not exist', async () => {
      const g = `${name}-owner`;
      const taskId = await start({ gate: g });
      const alice = clientOf(TOKENS.alice);
      await until('a chunk', async () => (await alice.readStream(taskId, 'out')).length > 0);
      const bob = clientOf(TOKENS.bob);
      const refusal = async (uri: string): Promise<unknown> =>
        bob.request('resources/read', { uri }).then(
          () => undefined,
          (err: unknown) => err,
        );
      const theirs = `durable-mcp://tasks/${taskId}/streams/out`;
      const nobody = `durable-mcp://tasks/${newTaskId()}/streams/out`;
      const [a, b] = [await refusal(theirs), await refusal(nobody)];
      expect(a).toBeInstanceOf(ProtocolError);
      expect(b).toBeInstanceOf(ProtocolError);
      expect({ code: (a as ProtocolError).code, data: (a as ProtocolError).data }).toEqual({
        code: -32602,
        data: { uri: theirs },
      });
      expect((a as ProtocolError).message.replace(theirs, 'URI')).toBe(
        (b as ProtocolError).message.replace(nobody, 'URI'),
      );
      const heard: Record<string, unknown>[] = [];
      const listening = new AbortController();
      const listen = bob
        .request(
          'subscriptions/listen',
          { notifications: { resourceSubscriptions: [theirs] } },
          { signal: listening.signal, onNotification: (m) => heard.push(m) },
        )
        .catch(() => undefined);
      await until('the acknowledgement', () => heard.length > 0);
      expect(heard[0]).toMatchObject({ params: { notifications: { resourceSubscriptions: [] } } });
      open(g);
      await until('the task to end', async () => (await alice.readStream(taskId, 'out')).ended);
      await new Promise((r) => setTimeout(r, 700));
      expect(heard.map((m) => m.method)).toEqual(['notifications/subscriptions/acknowledged']);
      listening.abort();
      await listen;
    });

    it('refuses chunks past the task’s bound: the tool error names the flag, and the stream keeps what fitted', async () => {
      const taskId = await start();
      const alice = clientOf(TOKENS.alice);
      await until('the task to end', async () => (await alice.readStream(taskId, 'flood')).ended);
      const page = await alice.readStream(taskId, 'flood');
      expect(page.chunks.map((c) => c.text)).toEqual(['f0', 'f1', 'f2', 'f3', 'f4', 'f5']);
      const task = await alice.request('tasks/get', { taskId });
      expect(task.status).toBe('completed');
      expect(JSON.stringify(task.result)).toContain(`max-stream-chunks-per-task: ${MAX_CHUNKS}`);
    });

    it('task_status shows a client without the tasks extension the chunks from the offset it passes', async () => {
      const g = `${name}-status`;
      const taskId = await start({ gate: g });
      const alice = clientOf(TOKENS.alice);
      await until('three chunks', async () => (await alice.readStream(taskId, 'out')).length === 3);
      const plain = createClient({ url: server.url, token: TOKENS.alice, tasks: false });
      clients.push(plain);
      const status = (args: Record<string, unknown>) =>
        plain.request('tools/call', { name: 'task_status', arguments: { taskId, ...args } });
      const first = await status({ stream: 'out', offset: 1 });
      expect((first.structuredContent as Record<string, unknown>).stream).toEqual({
        name: 'out',
        offset: 1,
        chunks: ['c1', 'c2'],
        nextOffset: 3,
        length: 3,
        ended: false,
      });
      const text = (first.content as { text: string }[]).at(-1)?.text;
      expect(text).toBe(
        'Stream "out", chunks 1 to 2 (the task may append more: call again with offset 3 for them):\nc1\nc2',
      );
      open(g);
      await until('the task to end', async () => (await alice.readStream(taskId, 'out')).ended);
      const last = await status({ stream: 'out', offset: 3 });
      expect((last.structuredContent as Record<string, unknown>).stream).toMatchObject({
        chunks: ['c3', 'c4'],
        nextOffset: 5,
        ended: true,
      });
      const wrong = await status({ stream: '../x' });
      expect(wrong.isError).toBe(true);
    });

    it('a replay after the run was cut off appends only what the cut-off run had not', async () => {
      const g = `${name}-replay`;
      const taskId = await start({ gate: g });
      const alice = clientOf(TOKENS.alice);
      await until('three chunks', async () => (await alice.readStream(taskId, 'out')).length === 3);
      // The process goes away with the run waiting in its step; another on the same store takes the task over.
      await server.close();
      open(g);
      server = await serve();
      const again = clientOf(TOKENS.alice);
      await until('the task to end', async () => (await again.readStream(taskId, 'out')).ended);
      const page = await again.readStream(taskId, 'out');
      expect(page.chunks.map((c) => `${c.offset}:${c.text}`)).toEqual([
        '0:c0',
        '1:c1',
        '2:c2',
        '3:c3',
        '4:c4',
      ]);
    });
  });
}

streamSuite('sqlite', (dir) => createSqliteTaskStore({ path: join(dir, 'tasks.db') }));

await withPostgres('the PostgreSQL tests of task streams', () => {
  const schema = `dmcp_streams_${randomBytes(4).toString('hex')}`;
  afterAll(() => dropSchema(schema));
  streamSuite('postgres', () =>
    createPostgresTaskStore({ connectionString: TEST_POSTGRES_URL, schema, poolSize: 4 }),
  );
});
