// Readiness apart from liveness: /readyz answers 200 only while the process should get traffic (its store answers,
// it is not draining), to the Host names the endpoint accepts (abuse.test.ts checks the refusal of others); /healthz
// stays liveness. On SIGTERM with --drain-ms, `serve` turns not ready at once and keeps serving for the drain, then
// closes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  createAnonymousAuthenticator,
  createDurableMcp,
  createHttpHandler,
  listenHttp,
  LOOPBACK_HOSTS,
} from '../../src/index.js';
import { createSqliteTaskStore } from '../../src/advanced.js';
import { storeCheck } from '../../src/cli/commands/serve-helpers.js';
import type { Backend } from '../../src/tasks/backend.js';
import { envelope, mcpHeaders, startServe, type ServeProcess } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-ready-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function serveWith(readiness?: () => Promise<string | undefined>) {
  const runtime = createDurableMcp({
    toolSets: [{ tools: [] }],
    store: createSqliteTaskStore({ path: join(dir, `r-${closers.length}-${Date.now()}.db`) }),
    worker: false,
  });
  const handler = createHttpHandler({
    server: runtime.server,
    authenticator: createAnonymousAuthenticator(),
    origin: { allowedHosts: LOOPBACK_HOSTS },
    ...(readiness === undefined ? {} : { readiness }),
  });
  const running = await listenHttp(handler, '127.0.0.1', 0);
  closers.push(async () => {
    await running.close(100);
    await runtime.close(100);
  });
  return running.url.replace(/\/mcp$/, '');
}

describe('/readyz', () => {
  it('answers 200 when ready, 503 with the reason otherwise, to the Host names the endpoint accepts', async () => {
    const state: { reason?: string } = {};
    const base = await serveWith(async () => state.reason);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
    state.reason = 'store unreachable';
    const down = await fetch(`${base}/readyz`);
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ status: 'not ready', reason: 'store unreachable' });
    // Liveness does not depend on it.
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('counts a failing check as not ready, and answers as /healthz without a check', async () => {
    const failing = await serveWith(() => Promise.reject(new Error('boom')));
    expect((await fetch(`${failing}/readyz`)).status).toBe(503);
    const plain = await serveWith();
    expect((await fetch(`${plain}/readyz`)).status).toBe(200);
  });

  it("serve's store check tells a probe only that the store does not answer, sharing one lookup between probes", async () => {
    let lookups = 0;
    const fail = { value: false };
    const backend = {
      tasks: {
        get: async () => {
          lookups += 1;
          if (fail.value) throw new Error('Task store unavailable: connection terminated');
          return 'not_found';
        },
      },
    } as unknown as Backend;
    const check = storeCheck(backend);
    expect(await Promise.all([check(), check(), check()])).toEqual([undefined, undefined, undefined]);
    expect(lookups).toBe(1);
    fail.value = true;
    const fresh = storeCheck(backend);
    expect(await fresh()).toBe('store unreachable');
  });
});

describe('serve --drain-ms', () => {
  const procs: ServeProcess[] = [];
  afterEach(async () => {
    for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  });

  it('turns not ready at once on SIGTERM, keeps serving through the drain, then exits 0', async () => {
    const p = await startServe(['--port', '0', '--store', join(dir, 'drain.db'), '--drain-ms', '1500']);
    procs.push(p);
    const base = p.url.replace(/\/mcp$/, '');
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const started = Date.now();
    p.child.kill('SIGTERM');
    await expect.poll(async () => (await fetch(`${base}/readyz`)).status, { timeout: 2_000 }).toBe(503);
    const during = await fetch(p.url, {
      method: 'POST',
      headers: mcpHeaders('tools/list'),
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } }),
    });
    expect(during.status).toBe(200);
    expect(await p.exited).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
  });
});
