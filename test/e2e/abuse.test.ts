// Requests that try to exhaust the server before it knows who sends them: credentials are checked from the headers
// before a body is read, bodies read at once share a bounded budget, slow uploads and surplus connections are cut,
// and what a refused caller sent is bounded in the audit log.
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDurableMcp,
  createSqliteBackend,
  defineTool,
  textResult,
  type AuditEvent,
  type DurableMcp,
  type RunningHttpServer,
} from '../../src/index.js';
import { envelope, mcpHeaders } from '../support/cli.js';
import { holdRequest } from '../support/raw-http.js';
import { tokenAuthenticator } from '../support/legacy-client.js';

const TOKEN = 'abuse-test-token-0123456789';
const TASKS = 'io.modelcontextprotocol/tasks';
const BUDGET = 1024 * 1024;
const audit: AuditEvent[] = [];

let dir: string;
let mcp: DurableMcp;
let running: RunningHttpServer;
let port: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'durable-mcp-abuse-'));
  const echo = defineTool<{ text?: string }>({
    name: 'echo',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    handler: ({ text = '' }) => textResult(text),
  });
  mcp = createDurableMcp({
    toolSets: [{ tools: [echo] }],
    backend: createSqliteBackend({ path: join(dir, 't.db') }),
  });
  running = await mcp.listen({
    port: 0,
    authenticator: tokenAuthenticator({ [TOKEN]: { tenant: 't', principal: 'p' } }),
    http: {
      maxBufferedBytes: BUDGET,
      audit: (e) => audit.push(e),
      extraRoutes: (req, res) => (req.url === '/metrics' ? (res.end('per-tool counters'), true) : false),
    },
    limits: { maxConnections: 6, requestTimeoutMs: 600 },
  });
  port = running.port;
});

afterAll(async () => {
  await mcp.close(0);
  rmSync(dir, { recursive: true, force: true });
});

/** A raw connection: whatever the server answers (first line), and when it closed the socket. */
function open(): { socket: Socket; reply: Promise<string>; closed: Promise<void> } {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  const reply = new Promise<string>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      resolve(text);
    });
    socket.on('close', () => resolve(text));
  });
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => undefined);
  return { socket, reply, closed };
}

const head = (length: number, token?: string): string =>
  [
    'POST /mcp HTTP/1.1',
    'Host: 127.0.0.1',
    'Content-Type: application/json',
    'Mcp-Method: tools/list',
    ...(token === undefined ? [] : [`Authorization: Bearer ${token}`]),
    `Content-Length: ${length}`,
    '',
    '',
  ].join('\r\n');

describe('before the caller is known', () => {
  it('refuses an unauthenticated upload from its headers, without waiting for (or keeping) its body', async () => {
    const c = open();
    c.socket.write(head(3_900_000) + 'x'.repeat(1_000)); // 3.9 MB announced, 1 kB sent, the rest never comes
    const reply = await c.reply;
    expect(reply).toMatch(/^HTTP\/1\.1 401/);
    expect(reply).toMatch(/www-authenticate: Bearer/i);
    await c.closed; // the connection is not kept for the rest of the upload
  });

  it('still echoes the request id of a small unauthenticated request', async () => {
    const res = await fetch(running.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'mcp-method': 'tools/list' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 42, method: 'tools/list', params: {} }),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ id: 42, error: { message: 'Unauthorized' } });
  });

  it('keeps at most 100 characters of the method a refused caller names in the audit line', async () => {
    await fetch(running.url, { method: 'POST', headers: { 'mcp-method': 'm'.repeat(10_000) }, body: '{}' });
    const denied = audit.filter((e) => e.event === 'auth.denied').at(-1);
    expect(denied?.method?.length).toBeLessThanOrEqual(101);
  });
});

describe('once the caller is known', () => {
  it('refuses a body that would take the shared budget over its bound (503), and serves again afterwards', async () => {
    const first = open();
    first.socket.write(head(900_000, TOKEN) + 'y'.repeat(800_000)); // held, incomplete
    await new Promise((r) => setTimeout(r, 200));
    const second = open();
    second.socket.write(head(900_000, TOKEN) + 'z'.repeat(400_000));
    expect(await second.reply).toMatch(/^HTTP\/1\.1 503/);
    first.socket.destroy();
    second.socket.destroy();
    await first.closed;
    const res = await fetch(running.url, {
      method: 'POST',
      headers: { ...mcpHeaders('tools/list'), authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } }),
    });
    expect(res.status).toBe(200);
  });

  it('cuts a slow upload at the request timeout (408)', async () => {
    const c = open();
    c.socket.write(head(1_000, TOKEN) + '{"jsonrpc":');
    const started = Date.now();
    expect(await c.reply).toMatch(/^HTTP\/1\.1 408/);
    // Generous: the bound is 600 ms, checked at least every 600 ms.
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('connections', () => {
  it('closes connections beyond the cap as they arrive', async () => {
    // Busy connections (a request in flight each): idle ones would yield their place instead.
    const held = await Promise.all(
      Array.from({ length: 6 }, () =>
        holdRequest(port, {
          headers: { ...mcpHeaders('subscriptions/listen'), authorization: `Bearer ${TOKEN}` },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'subscriptions/listen',
            params: { notifications: { toolsListChanged: true }, _meta: envelope() },
          }),
        }),
      ),
    );
    try {
      expect(held.map((h) => h.status)).toEqual([200, 200, 200, 200, 200, 200]);
      const extra = open();
      await extra.closed;
      expect(extra.socket.destroyed).toBe(true);
    } finally {
      for (const h of held) h.close();
    }
    await new Promise((r) => setTimeout(r, 100));
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });
});

describe('routes beside the endpoint', () => {
  const get = (path: string, host: string): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });

  it('/metrics answers only the Host names the endpoint accepts (DNS rebinding)', async () => {
    expect(await get('/metrics', 'evil.example')).toBe(403);
    expect(await get('/metrics', `127.0.0.1:${port}`)).toBe(200);
  });

  it('/readyz answers only the Host names the endpoint accepts (DNS rebinding)', async () => {
    expect(await get('/readyz', 'evil.example')).toBe(403);
    expect(await get('/readyz', '10.0.0.7:8080')).toBe(403);
    expect(await get('/readyz', `127.0.0.1:${port}`)).toBe(200);
    expect(await get('/readyz', `localhost:${port}`)).toBe(200);
  });

  it('/healthz answers any Host, for probes that send their own', async () => {
    expect(await get('/healthz', '10.0.0.7:8080')).toBe(200);
  });
});

/** A task tool that sleeps a minute: its tasks stay unfinished. */
const slow = defineTool({
  name: 'slow',
  inputSchema: { type: 'object' },
  task: { support: 'optional' },
  handler: async (_args, ctx) => {
    await ctx.sleep('nap', 60_000);
    return textResult('done');
  },
});

describe('the active-task quota', () => {
  it('holds under concurrent creations: 40 calls at once with a limit of 5 create 5 tasks', async () => {
    const quota = createDurableMcp({
      toolSets: [{ tools: [slow] }],
      backend: createSqliteBackend({ path: join(dir, 'quota.db') }),
      tasks: { maxActiveTasksPerPrincipal: 5, tasksGetRate: false },
    });
    const on = await quota.listen({ port: 0 });
    try {
      const call = () =>
        fetch(on.url, {
          method: 'POST',
          headers: mcpHeaders('tools/call', 'slow'),
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'slow', arguments: {}, _meta: envelope({ extensions: { [TASKS]: {} } }) },
          }),
        }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));
      const answers = await Promise.all(Array.from({ length: 40 }, call));
      const created = answers.filter(
        (a) => (a.body.result as { resultType?: string } | undefined)?.resultType === 'task',
      );
      expect(created).toHaveLength(5);
      expect(answers.filter((a) => a.status === 429)).toHaveLength(35);
    } finally {
      await quota.close(0);
    }
  });
});

interface Reply {
  result?: { taskId?: string };
  error?: { message: string; data?: unknown };
}

describe('the storage quota', () => {
  it('counts cancelled tasks: after 3 create-and-cancel cycles with a limit of 3, the next call is 429', async () => {
    const quota = createDurableMcp({
      toolSets: [{ tools: [slow] }],
      backend: createSqliteBackend({ path: join(dir, 'stored.db') }),
      tasks: { maxStoredTasksPerPrincipal: 3, tasksGetRate: false },
    });
    const on = await quota.listen({ port: 0 });
    const rpc = (method: string, name: string | undefined, params: Record<string, unknown>) =>
      fetch(on.url, {
        method: 'POST',
        headers: mcpHeaders(method, name),
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method,
          params: { ...params, _meta: envelope({ extensions: { [TASKS]: {} } }) },
        }),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as Reply }));
    try {
      for (let i = 0; i < 3; i++) {
        const created = await rpc('tools/call', 'slow', { name: 'slow', arguments: { i } });
        const taskId = String(created.body.result?.taskId);
        const cancelled = await rpc('tasks/cancel', taskId, { taskId });
        expect(cancelled.status).toBe(200);
      }
      const refused = await rpc('tools/call', 'slow', { name: 'slow', arguments: { i: 3 } });
      expect(refused.status).toBe(429);
      expect(refused.body.error?.message).toMatch(/Too many stored tasks \(limit 3\)/);
      expect(refused.body.error?.data).toMatchObject({ limit: 3, quota: 'stored' });
    } finally {
      await quota.close(0);
    }
  });
});

describe('the tenant quota', () => {
  it("counts all the tenant's principals together: a third call of either is 429, another tenant's passes", async () => {
    const quota = createDurableMcp({
      toolSets: [{ tools: [slow] }],
      backend: createSqliteBackend({ path: join(dir, 'tenant.db') }),
      tasks: { maxActiveTasksPerTenant: 2, tasksGetRate: false },
    });
    const on = await quota.listen({
      port: 0,
      authenticator: tokenAuthenticator({
        a: { tenant: 't', principal: 'a' },
        b: { tenant: 't', principal: 'b' },
        c: { tenant: 'u', principal: 'c' },
      }),
    });
    const call = (token: string) =>
      fetch(on.url, {
        method: 'POST',
        headers: { ...mcpHeaders('tools/call', 'slow'), authorization: `Bearer ${token}` },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'slow', arguments: {}, _meta: envelope({ extensions: { [TASKS]: {} } }) },
        }),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as Reply }));
    try {
      expect((await call('a')).status).toBe(200);
      expect((await call('b')).status).toBe(200);
      const refused = await call('a');
      expect(refused.status).toBe(429);
      expect(refused.body.error?.data).toMatchObject({ limit: 2, quota: 'tenant-active' });
      expect((await call('b')).status).toBe(429);
      expect((await call('c')).status).toBe(200);
    } finally {
      await quota.close(0);
    }
  });
});

describe('subscriptions/listen', () => {
  it('caps the open streams of one principal (429), not those of another', async () => {
    const limited = createDurableMcp({
      toolSets: [{ tools: [] }],
      backend: createSqliteBackend({ path: join(dir, 'listens.db') }),
      server: { maxListensPerPrincipal: 2 },
    });
    const on = await limited.listen({
      port: 0,
      authenticator: tokenAuthenticator({
        [TOKEN]: { tenant: 't', principal: 'p' },
        [`${TOKEN}-other`]: { tenant: 't', principal: 'q' },
      }),
    });
    const streams: AbortController[] = [];
    const listen = async (token: string): Promise<number> => {
      const abort = new AbortController();
      streams.push(abort);
      const res = await fetch(on.url, {
        method: 'POST',
        signal: abort.signal,
        headers: { ...mcpHeaders('subscriptions/listen'), authorization: `Bearer ${token}` },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'subscriptions/listen',
          params: { notifications: { toolsListChanged: true }, _meta: envelope() },
        }),
      });
      return res.status;
    };
    try {
      expect(await listen(TOKEN)).toBe(200);
      expect(await listen(TOKEN)).toBe(200);
      expect(await listen(TOKEN)).toBe(429);
      expect(await listen(`${TOKEN}-other`)).toBe(200);
      // A stream that ends makes room.
      streams[0]?.abort();
      await new Promise((r) => setTimeout(r, 200));
      expect(await listen(TOKEN)).toBe(200);
    } finally {
      for (const s of streams) s.abort();
      await limited.close(0);
    }
  });
});
