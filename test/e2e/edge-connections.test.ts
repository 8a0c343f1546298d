// Connections that only wait cannot keep anyone out: a connection that sends no complete request head is closed after
// the headers timeout; at the connection cap, a connection with no request in flight (one that sent nothing yet, or an
// idle keep-alive one) yields its place to a new one, of the new one's own address or else of the address holding the
// most; when asked, what one client address holds is capped, by the connection's address or, behind trusted proxies,
// by the address X-Forwarded-For names; and a request without credentials is not waited for. Over real sockets, from
// several loopback addresses.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createDurableMcp,
  createSqliteBackend,
  type DurableMcp,
  type ListenHttpOptions,
  type RunningHttpServer,
} from '../../src/index.js';
import { envelope, mcpHeaders } from '../support/cli.js';
import { tokenAuthenticator } from '../support/legacy-client.js';
import { holdRequest, oneShot, rawConnection, received, type RawConnection } from '../support/raw-http.js';

let dir: string;
let mcp: DurableMcp;
const opened: RawConnection[] = [];
const held: { close(): void }[] = [];
const servers: RunningHttpServer[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'durable-mcp-edge-'));
  mcp = createDurableMcp({
    toolSets: [{ tools: [] }],
    backend: createSqliteBackend({ path: join(dir, 't.db') }),
    worker: false,
  });
});
afterEach(async () => {
  for (const c of opened.splice(0)) c.socket.destroy();
  for (const h of held.splice(0)) h.close();
  for (const s of servers.splice(0)) await s.close(0);
});
afterAll(async () => {
  await mcp.close(0);
  rmSync(dir, { recursive: true, force: true });
});

async function serve(limits: ListenHttpOptions): Promise<number> {
  const running = await mcp.listen({ port: 0, limits });
  servers.push(running);
  return running.port;
}

function open(port: number, from?: string): RawConnection {
  const c = rawConnection(port, from);
  opened.push(c);
  return c;
}

/** Waits (bounded) until the server holds `n` connections. */
async function holding(port: number, n: number): Promise<void> {
  const server = servers.find((s) => s.port === port)?.server;
  for (let i = 0; i < 200; i += 1) {
    const count = await new Promise<number>((resolve) => server?.getConnections((_e, c) => resolve(c)));
    if (count === n) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`the server never held ${n} connections`);
}

/** A subscriptions/listen stream: a request that stays in flight. */
async function listenStream(port: number, headers: Record<string, string> = {}, from?: string) {
  const stream = await holdRequest(port, {
    from,
    headers: { ...mcpHeaders('subscriptions/listen'), ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'subscriptions/listen',
      params: { notifications: { toolsListChanged: true }, _meta: envelope() },
    }),
  });
  held.push(stream);
  return stream;
}

const toolsList = (port: number, from?: string) =>
  oneShot(port, {
    path: '/mcp',
    method: 'POST',
    from,
    headers: mcpHeaders('tools/list'),
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } }),
  });

describe('the headers timeout', () => {
  it('closes a connection that sends nothing, or an endless head, after the headers timeout (408)', async () => {
    const port = await serve({ headersTimeoutMs: 500, requestTimeoutMs: 20_000 });
    const started = Date.now();
    const silent = open(port);
    const slow = open(port);
    slow.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: '); // the head never ends
    expect(await silent.closedWithin(8_000)).toBe(true);
    expect(await slow.closedWithin(8_000)).toBe(true);
    // Generous: the bound is 500 ms, checked every 500 ms.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(silent.text()).toMatch(/^HTTP\/1\.1 408/);
    expect(slow.text()).toMatch(/^HTTP\/1\.1 408/);
  });
});

describe('the connection cap', () => {
  it('lets a request in while connections that sent nothing hold every slot: the one idle longest yields', async () => {
    const port = await serve({ maxConnections: 4, headersTimeoutMs: 20_000, requestTimeoutMs: 20_000 });
    const idle: RawConnection[] = [];
    for (let i = 0; i < 4; i += 1) {
      idle.push(open(port));
      await holding(port, i + 1);
    }
    expect((await oneShot(port)).status).toBe(200);
    expect(await idle[0]?.closedWithin(5_000)).toBe(true);
    expect(idle.slice(1).map((c) => c.socket.destroyed)).toEqual([false, false, false]);
    // Full again: an MCP request gets in the same way.
    idle.push(open(port));
    await holding(port, 4);
    expect((await toolsList(port)).status).toBe(200);
    expect(await idle[1]?.closedWithin(5_000)).toBe(true);
    expect(idle.slice(2).map((c) => c.socket.destroyed)).toEqual([false, false, false]);
  });

  it('lets a request in while idle keep-alive connections hold every slot: the one idle longest yields', async () => {
    const port = await serve({ maxConnections: 3, keepAliveTimeoutMs: 60_000 });
    const kept: RawConnection[] = [];
    for (let i = 0; i < 3; i += 1) {
      const c = open(port);
      c.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      expect(await received(c, '{"status":"ok"}')).toBe(true);
      kept.push(c);
    }
    expect((await toolsList(port)).status).toBe(200);
    expect(await kept[0]?.closedWithin(5_000)).toBe(true);
    expect(kept.slice(1).map((c) => c.socket.destroyed)).toEqual([false, false]);
  });

  it('takes the place from the address that holds the most: one that keeps opening connections closes only its own', async () => {
    const port = await serve({ maxConnections: 4, headersTimeoutMs: 20_000, requestTimeoutMs: 20_000 });
    const quiet = open(port, '127.0.0.2'); // idle longest of all
    await holding(port, 1);
    const flood: RawConnection[] = [];
    for (let i = 0; i < 3; i += 1) {
      flood.push(open(port));
      await holding(port, i + 2);
    }
    // The flooding address goes on: each new connection of its own closes its own connection idle longest.
    for (let i = 0; i < 4; i += 1) {
      flood.push(open(port));
      expect(await flood[i]?.closedWithin(5_000)).toBe(true);
    }
    // A third address gets in at the expense of the flooding one, not of the quiet one.
    expect((await toolsList(port, '127.0.0.3')).status).toBe(200);
    expect(await flood[4]?.closedWithin(5_000)).toBe(true);
    expect(quiet.socket.destroyed).toBe(false);
    expect(flood.slice(5).map((c) => c.socket.destroyed)).toEqual([false, false]);
  });

  it('closes a new connection at once when every other one has a request in flight', async () => {
    const port = await serve({ maxConnections: 2 });
    for (let i = 0; i < 2; i += 1) expect((await listenStream(port)).status).toBe(200);
    const extra = open(port);
    expect(await extra.closedWithin(5_000)).toBe(true);
    expect(extra.text()).toBe('');
    for (const h of held) h.close();
    let status: number | undefined;
    for (let i = 0; i < 50 && status !== 200; i += 1) {
      await new Promise((r) => setTimeout(r, 20));
      status = (await oneShot(port)).status;
    }
    expect(status).toBe(200);
  });
});

describe('the per-source cap', () => {
  it('caps the connections of one client address, closing more as they arrive; another address is served', async () => {
    const port = await serve({ maxConnectionsPerSource: 2 });
    open(port);
    open(port);
    await holding(port, 2);
    const third = open(port);
    expect(await third.closedWithin(5_000)).toBe(true);
    expect(third.text()).toBe('');
    // Without trusted proxies, X-Forwarded-For counts for nothing.
    const spoofed = await oneShot(port, { headers: { 'x-forwarded-for': '203.0.113.7' } });
    expect(spoofed.status).toBeUndefined();
    expect((await oneShot(port, { from: '127.0.0.2' })).status).toBe(200);
    expect((await toolsList(port, '127.0.0.2')).status).toBe(200);
  });

  it('behind a trusted proxy, caps the requests in flight of the client X-Forwarded-For names (429), not the proxy', async () => {
    const port = await serve({ maxConnectionsPerSource: 1, trustProxy: ['127.0.0.1/32', '10.0.0.0/8'] });
    const xff = (value: string) => ({ 'x-forwarded-for': value });
    expect((await listenStream(port, xff('198.51.100.9, 203.0.113.7'))).status).toBe(200);
    // The proxy's own connections are not capped by its address: other clients go on through it.
    expect((await oneShot(port, { headers: xff('203.0.113.8') })).status).toBe(200);
    const refused = await oneShot(port, { headers: xff('203.0.113.7') });
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 429, data: { limit: 1 } } });
    // Hops that are trusted proxies are skipped; what a client wrote left of its own address is not believed.
    expect((await oneShot(port, { headers: xff('203.0.113.7, 10.1.2.3') })).status).toBe(429);
    expect((await oneShot(port, { headers: xff('203.0.113.7, 203.0.113.9') })).status).toBe(200);
    // From an address that is not a trusted proxy, X-Forwarded-For is not believed: it counts for its own address.
    const direct = open(port, '127.0.0.2');
    direct.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(await received(direct, '{"status":"ok"}')).toBe(true);
    expect((await oneShot(port, { from: '127.0.0.2', headers: xff('203.0.113.50') })).status).toBeUndefined();
    // The client's request ends: it makes room.
    for (const h of held) h.close();
    let status: number | undefined;
    for (let i = 0; i < 50 && status !== 200; i += 1) {
      await new Promise((r) => setTimeout(r, 20));
      status = (await oneShot(port, { headers: xff('203.0.113.7') })).status;
    }
    expect(status).toBe(200);
  });

  it('refuses a trusted proxy list entry that is neither an address nor a CIDR range', async () => {
    await expect(serve({ maxConnectionsPerSource: 1, trustProxy: ['proxy.internal'] })).rejects.toThrow(
      /trustProxy: not an IP address or CIDR range: "proxy.internal"/,
    );
  });
});

describe('requests without credentials', () => {
  it('are answered 401 and lose their connection when their small body does not come at once', async () => {
    const running = await mcp.listen({
      port: 0,
      authenticator: tokenAuthenticator({}),
      limits: { requestTimeoutMs: 20_000 },
    });
    servers.push(running);
    const started = Date.now();
    const c = open(running.port);
    c.socket.write(
      'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc"',
    );
    expect(await c.closedWithin(8_000)).toBe(true);
    expect(c.text()).toMatch(/^HTTP\/1\.1 401/);
    // Generous: the wait is one second; the request timeout (20 s) plays no part.
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
