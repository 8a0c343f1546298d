// The shipped HAProxy config (deploy/haproxy/haproxy.cfg, only its addresses changed) in front of a replica: valid
// for `haproxy -c`; its active check (GET /readyz with the public Host) passes, so tasks run through it; /admin only
// from the allowed network, /metrics not at all; a draining replica taken out by the check. Needs Debian's haproxy
// (`.ci/run` installs it); elsewhere skipped with a reason when it is missing.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from '../support/cli.js';
import { oneShot } from '../support/raw-http.js';
import { startTask, waitForTask } from '../support/task-calls.js';

const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((p) => existsSync(p));
const CONFIG = fileURLToPath(new URL('../../deploy/haproxy/haproxy.cfg', import.meta.url));
const TOOLS = fileURLToPath(new URL('../fixtures/tools/replica-tools.mjs', import.meta.url));

if (HAPROXY === undefined && process.env.CI !== 'true') {
  console.log('skipping the HAProxy deployment test: haproxy is not installed (apt-get install -y haproxy)');
  describe.skip('HAProxy in front of a replica', () => undefined);
} else defineSuite(HAPROXY ?? 'haproxy');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function until(what: string, ok: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The shipped config with this test's addresses: HAProxy on a loopback port, one replica, this host as operator. */
function haproxyConfig(port: number, replica: number): string {
  const site = readFileSync(CONFIG, 'utf8')
    .replace(/^ {4}bind :80$/m, `    bind 127.0.0.1:${port}`)
    .replace(/(?:^ {4}server mcp\d 10\.0\.0\.\d+:3000\n)+/m, `    server mcp1 127.0.0.1:${replica}\n`)
    .replace(/^( {4}acl operators src) 10\.0\.100\.0\/24$/m, '$1 127.0.0.1');
  if (
    site.includes('10.0.0.') ||
    !site.includes(`bind 127.0.0.1:${port}`) ||
    !site.includes('acl operators src 127.0.0.1')
  )
    throw new Error('the shipped HAProxy config no longer has the expected bind, server and acl lines');
  return site;
}

function defineSuite(haproxy: string): void {
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-haproxy-'));
  let replica: ServeProcess;
  let proxy: ChildProcess;
  let log = '';
  let port = 0;
  let replicaPort = 0;

  beforeAll(async () => {
    replicaPort = await freePort();
    // As the config's header has it, but on SQLite, anonymous with the operator role (for /admin), and with a drain
    // long enough to see the replica out of HAProxy while it still serves on a loaded machine.
    replica = await startServe(
      [
        ...['--port', String(replicaPort), '--store', join(dir, 'tasks.db'), '--tools', TOOLS],
        ...['--allowed-hosts', 'mcp.example.com', '--drain-ms', '15000', '--dev-operator'],
      ],
      30_000,
      { DURABLE_MCP_TEST_LOG: join(dir, 'runs.log') },
    );
    port = await freePort();
    writeFileSync(join(dir, 'haproxy.cfg'), haproxyConfig(port, replicaPort));
    proxy = spawn(haproxy, ['-db', '-f', join(dir, 'haproxy.cfg')], { stdio: ['ignore', 'pipe', 'pipe'] });
    proxy.stdout?.on('data', (c: Buffer) => (log += c.toString()));
    proxy.stderr?.on('data', (c: Buffer) => (log += c.toString()));
    // The first check of the replica, sent with the shipped Host header, passes.
    await until('the first health check', () => /Health check for server durable_mcp\/mcp1 /.test(log));
  }, 60_000);

  afterAll(async () => {
    proxy?.kill('SIGTERM');
    if (replica !== undefined && replica.child.exitCode === null) {
      replica.child.kill('SIGKILL');
      await replica.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  describe('HAProxy in front of a replica', () => {
    it('accepts the shipped config as it is (haproxy -c)', () => {
      const checked = spawnSync(haproxy, ['-c', '-f', CONFIG], { encoding: 'utf8' });
      expect(checked.status, checked.stdout + checked.stderr).toBe(0);
      expect(checked.stdout).toContain('Configuration file is valid');
      expect(spawnSync(haproxy, ['-c', '-f', join(dir, 'haproxy.cfg')]).status).toBe(0);
    });

    it('checks /readyz with the public Host and passes, so tasks run through it', async () => {
      expect(log).toMatch(
        /Health check for server durable_mcp\/mcp1 succeeded, reason: Layer7 check passed, code: 200/,
      );
      const url = `http://127.0.0.1:${port}/mcp`;
      const taskId = await startTask(url, 'memo_job', { ms: 10 });
      expect((await waitForTask(url, taskId, ['completed', 'failed'])).status).toBe('completed');
    });

    it('serves /admin to the allowed network only, and never /metrics or the probes', async () => {
      const page = await oneShot(port, { path: '/admin' });
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      const session = await oneShot(port, { path: '/admin/api/v1/session' });
      expect(JSON.parse(session.body)).toMatchObject({ operator: { tenants: 'all' } });
      for (const path of ['/admin', '/admin/api/v1/session'])
        expect((await oneShot(port, { path, from: '127.0.0.2' })).status, path).toBe(403);
      for (const path of ['/metrics', '/readyz', '/healthz', '/administrator'])
        expect((await oneShot(port, { path })).status, path).toBe(404);
    });

    it('takes a draining replica out after its checks fail, while the replica still serves', async () => {
      replica.child.kill('SIGTERM');
      await until(
        'the replica to be marked down',
        () => /Server durable_mcp\/mcp1 is DOWN/.test(log),
        30_000,
      );
      expect(log).toMatch(
        /Health check for server durable_mcp\/mcp1 failed, reason: Layer7 wrong status, code: 503/,
      );
      expect((await oneShot(port, { path: '/admin' })).status).toBe(503);
      expect(
        (await oneShot(replicaPort, { path: '/readyz', headers: { host: 'mcp.example.com' } })).status,
      ).toBe(503);
      expect((await oneShot(replicaPort, { path: '/admin' })).status).toBe(200);
      expect(await replica.exited).toBe(0);
    }, 60_000);
  });
}
