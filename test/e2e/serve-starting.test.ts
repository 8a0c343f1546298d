// `serve` on a PostgreSQL store that does not answer at start: the port opens anyway (liveness 200, readiness and
// every request 503 with Retry-After), the store is tried again with back-off, and the server turns ready on the
// same port once it answers; SIGTERM while starting exits at once. With and without DURABLE_MCP_STATE_SECRET (without
// it the secret is read from the store, so nothing is built before the store opens).
import { randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { postgresMigrations } from '../../src/stores/postgres/migrations.js';
import { envelope, mcpHeaders, startServe, type ServeProcess } from '../support/cli.js';
import { TEST_POSTGRES_URL, withPostgres } from '../support/postgres.js';

const procs: ServeProcess[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) {
    if (p.child.exitCode === null) {
      p.child.kill('SIGKILL');
      await p.exited;
    }
  }
});

/** A port on 127.0.0.1 with nothing listening (just released by the OS). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** The test store's URL, but on `port` of 127.0.0.1. */
const storeAt = (port: number): string => {
  const url = new URL(TEST_POSTGRES_URL);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return url.toString();
};

// The children inherit this process's environment: "without" means without.
delete process.env.DURABLE_MCP_STATE_SECRET;
const modes = [
  ['without DURABLE_MCP_STATE_SECRET', {}],
  ['with DURABLE_MCP_STATE_SECRET', { DURABLE_MCP_STATE_SECRET: 'a-state-secret-for-the-starting-tests' }],
] as const;

const logLines = (p: ServeProcess): Record<string, unknown>[] =>
  p
    .stderr()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

const post = (url: string, method: string, params: Record<string, unknown>, name?: string) =>
  fetch(url, {
    method: 'POST',
    headers: mcpHeaders(method, name),
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: envelope() } }),
  });

/** What a starting server answers: liveness yes, readiness and everything else 503, nothing dispatched. */
async function expectStarting(p: ServeProcess): Promise<void> {
  expect((await fetch(`${p.origin}/healthz`)).status).toBe(200);
  const ready = await fetch(`${p.origin}/readyz`);
  expect(ready.status).toBe(503);
  expect(await ready.json()).toEqual({ status: 'not ready', reason: 'store unreachable' });
  const call = await post(p.url, 'tools/call', { name: 'echo', arguments: { text: 'hi' } }, 'echo');
  expect(call.status).toBe(503);
  expect(call.headers.get('retry-after')).toBe('1');
  expect(await call.json()).toEqual({
    jsonrpc: '2.0',
    id: null,
    error: { code: -32603, message: 'Server starting: its store does not answer yet' },
  });
  expect((await fetch(`${p.origin}/metrics`)).status).toBe(503);
  await expect
    .poll(() => logLines(p).find((l) => l.level === 40 && String(l.msg).startsWith('not ready')))
    .toMatchObject({ reason: expect.stringContaining('connection refused') as unknown });
  expect(logLines(p).some((l) => l.msg === 'serving')).toBe(false);
}

describe('serve while its store does not answer', () => {
  for (const [mode, env] of modes) {
    it(`listens in starting mode and exits at once, with 0, on SIGTERM (${mode})`, async () => {
      const port = await closedPort();
      const p = await startServe(['--port', '0', '--store', storeAt(port)], 15_000, env);
      procs.push(p);
      await expectStarting(p);
      const started = Date.now();
      p.child.kill('SIGTERM');
      expect(await p.exited).toBe(0);
      expect(Date.now() - started).toBeLessThan(5_000);
    });
  }

  it('still exits at once on a store it can open but not use (a SQLite file lacking migrations, --no-migrate)', async () => {
    const p = startServe(['--port', '0', '--store', ':memory:', '--no-migrate']);
    await expect(p).rejects.toThrow(/lacks migrations/);
  });
});

/** A TCP proxy on `port` to the test PostgreSQL: the store "comes up" when it starts. */
async function proxyTo(port: number): Promise<{ close(): Promise<void> }> {
  const target = new URL(TEST_POSTGRES_URL);
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

await withPostgres('serve turns ready once its store answers', () => {
  describe('serve turns ready once its store answers', () => {
    const schemas: string[] = [];
    const proxies: { close(): Promise<void> }[] = [];
    afterAll(async () => {
      for (const proxy of proxies) await proxy.close();
      const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await admin.connect();
      for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    });

    it('exits at once when the store answers with a refusal (a database that does not exist)', async () => {
      const url = new URL(TEST_POSTGRES_URL);
      url.pathname = `/no_such_db_${randomBytes(4).toString('hex')}`;
      await expect(startServe(['--port', '0', '--store', url.toString()])).rejects.toThrow(
        /exited with 1: .*database does not exist/s,
      );
    });

    it('exits with 1 when the store, once it answers, refuses (migrations missing under --no-migrate)', async () => {
      const schema = `dmcp_starting_${randomBytes(4).toString('hex')}`;
      const port = await closedPort();
      const p = await startServe([
        '--port',
        '0',
        '--store',
        storeAt(port),
        '--pg-schema',
        schema,
        '--no-migrate',
      ]);
      procs.push(p);
      await expectStarting(p);
      proxies.push(await proxyTo(port));
      expect(await p.exited).toBe(1);
      expect(p.stderr()).toContain(`durable-mcp: --store: schema "${schema}" lacks migrations 1, 2`);
    }, 60_000);

    for (const [mode, env] of modes) {
      it(`serves on the same port, and says at which migration (${mode})`, async () => {
        const schema = `dmcp_starting_${randomBytes(4).toString('hex')}`;
        schemas.push(schema);
        const port = await closedPort();
        const p = await startServe(
          ['--port', '0', '--store', storeAt(port), '--pg-schema', schema],
          15_000,
          env,
        );
        procs.push(p);
        await expectStarting(p);
        proxies.push(await proxyTo(port));
        await expect
          .poll(async () => (await fetch(`${p.origin}/readyz`)).status, { timeout: 30_000, interval: 200 })
          .toBe(200);
        const call = await post(p.url, 'tools/call', { name: 'echo', arguments: { text: 'up' } }, 'echo');
        expect(call.status).toBe(200);
        expect(await call.json()).toMatchObject({
          id: 7,
          result: { content: [{ type: 'text', text: 'up' }] },
        });
        const lines = logLines(p);
        expect(lines.find((l) => l.msg === 'ready: the store answers')).toBeDefined();
        expect(lines.find((l) => l.msg === 'serving')).toMatchObject({
          schema,
          migration: Math.max(...postgresMigrations.map((m) => m.version)),
        });
        p.child.kill('SIGTERM');
        expect(await p.exited).toBe(0);
      }, 60_000);
    }
  });
});
