// The shipped nginx config (deploy/nginx/durable-mcp.conf, only its addresses changed) in front of three replicas on
// one PostgreSQL schema, migrated apart and served with --no-migrate, plus a fourth upstream whose store is
// unreachable. Through nginx: tasks created, answered and cancelled on different replicas; push on a stream idle for
// 90 s; /metrics not reachable; the operators' /admin reachable from the allowed network only; a rolling restart of
// every replica under steady traffic with no non-2xx answer and no lost task; the replica without its store answers
// no client. Needs Debian's nginx (`.ci/run` installs it).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, envelope, mcpHeaders, startServe, type ServeProcess } from '../support/cli.js';
import { withPostgres, TEST_POSTGRES_URL } from '../support/postgres.js';
import { holdRequest, oneShot } from '../support/raw-http.js';

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));
const CONFIG = fileURLToPath(new URL('../../deploy/nginx/durable-mcp.conf', import.meta.url));
const TOOLS = fileURLToPath(new URL('../fixtures/tools/replica-tools.mjs', import.meta.url));
const SCHEMA = `dmcp_nginx_${randomBytes(5).toString('hex')}`;
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} }, elicitation: {} };
const IDLE_MS = 90_000;

if (NGINX === undefined && process.env.CI !== 'true') {
  console.log('skipping the nginx deployment test: nginx is not installed (apt-get install -y nginx)');
  describe.skip('nginx in front of replicas', () => undefined);
} else await withPostgres('the nginx deployment test', defineSuite);

type Json = Record<string, unknown>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitUntil(probe: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

/** Every answer the client got: its HTTP status and, for JSON-RPC, the error if any. */
interface Answer {
  method: string;
  status: number;
  error?: unknown;
}

/** The shipped config with this test's addresses: the replicas as upstreams, nginx on a loopback port. */
function nginxConfig(dir: string, port: number, upstreams: readonly number[]): string {
  const shipped = readFileSync(CONFIG, 'utf8');
  const servers = upstreams.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=5s;`).join('\n');
  const site = shipped
    .replace(/(?:^ {4}server 10\.0\.0\.\d+:3000 .*\n)+/m, `${servers}\n`)
    .replace(/^ {4}listen 80;$/m, `    listen 127.0.0.1:${port};`)
    // The operators' network: this test's own address only (127.0.0.2 stands for everyone else).
    .replace(/^( {8}allow) 10\.0\.100\.0\/24;$/m, '$1 127.0.0.1;');
  if (
    site.includes('10.0.0.') ||
    !site.includes(`listen 127.0.0.1:${port}`) ||
    !site.includes('allow 127.0.0.1;')
  )
    throw new Error('the shipped nginx config no longer has the expected upstream and listen lines');
  writeFileSync(join(dir, 'site.conf'), site);
  for (const d of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, d), { recursive: true });
  const asRoot = process.getuid?.() === 0 ? 'user root;\n' : '';
  const main = `${asRoot}daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log ${dir}/access.log;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  include ${dir}/site.conf;
}
`;
  writeFileSync(join(dir, 'nginx.conf'), main);
  return join(dir, 'nginx.conf');
}

/** One JSON-RPC request through `url`; the final message of a JSON or SSE answer. Records every answer. */
async function rpc(
  url: string,
  answers: Answer[],
  method: string,
  params: Json,
  name?: string,
): Promise<Json | undefined> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: mcpHeaders(method, name),
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: envelope(TASKS) } }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    answers.push({ method, status: 0, error: String(err) });
    return undefined;
  }
  const text = await res.text();
  const data = [...text.matchAll(/^data: (.+)$/gm)].map((m) => m[1] as string);
  let message: Json | undefined;
  try {
    message = JSON.parse(data.length > 0 ? (data[data.length - 1] as string) : text) as Json;
  } catch {
    message = undefined;
  }
  answers.push({
    method,
    status: res.status,
    error: message?.error ?? (message === undefined ? text : undefined),
  });
  return message?.result as Json | undefined;
}

/** A `subscriptions/listen` stream read as it arrives: messages, and when each line came. */
function listen(url: string, taskIds: string[]) {
  const lines: { at: number; line: string }[] = [];
  const controller = new AbortController();
  const done = fetch(url, {
    method: 'POST',
    headers: mcpHeaders('subscriptions/listen'),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'listen-1',
      method: 'subscriptions/listen',
      params: { notifications: { taskIds }, _meta: envelope(TASKS) },
    }),
    signal: controller.signal,
  }).then(async (res) => {
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { done: end, value } = await reader.read();
      if (end) return;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf('\n')) !== -1) {
        lines.push({ at: Date.now(), line: buffer.slice(0, cut) });
        buffer = buffer.slice(cut + 1);
      }
    }
  });
  const messages = (): { at: number; message: Json }[] =>
    lines
      .filter((l) => l.line.startsWith('data: '))
      .map((l) => ({ at: l.at, message: JSON.parse(l.line.slice(6)) as Json }));
  return { lines, messages, done: done.catch(() => undefined), close: () => controller.abort() };
}

/** Which replicas logged a request of `method` (their debug `request` lines). */
const servedBy = (replicas: readonly ServeProcess[], method: string): number =>
  replicas.filter((r) => r.stderr().includes(`"method":"${method}"`)).length;

function defineSuite(): void {
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-nginx-'));
  const admin = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max: 1 });
  const answers: Answer[] = [];
  const ports: number[] = [];
  const replicas: ServeProcess[] = [];
  const retired: ServeProcess[] = [];
  let unready: ServeProcess;
  let nginx: ChildProcess;
  let url = '';
  let stream: ReturnType<typeof listen>;
  let pushTask = '';
  let streamOpenedAt = 0;
  const env = { DURABLE_MCP_TEST_LOG: join(dir, 'runs.log'), DURABLE_MCP_STORE: TEST_POSTGRES_URL };

  const serveArgs = (port: number): string[] =>
    [
      ['--port', String(port), '--tools', TOOLS, '--pg-schema', SCHEMA, '--no-migrate', '--dev-operator'],
      ['--drain-ms', '1500', '--shutdown-grace-ms', '5000', '--lease-ms', '5000', '--log-level', 'debug'],
    ].flat();
  const direct = (port: number, path: string): Promise<Response> =>
    fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(5_000) });

  beforeAll(async () => {
    // Migrations apart, as docs/deployment.md has them; the replicas only check the level.
    execFileSync(process.execPath, [BIN, 'migrate', '--pg-schema', SCHEMA], {
      env: { ...process.env, ...env },
    });
    for (let i = 0; i < 4; i += 1) ports.push(await freePort());
    for (const port of ports.slice(0, 3)) replicas.push(await startServe(serveArgs(port), 30_000, env));
    // A fourth upstream whose store does not answer (nothing listens on its port): it stays not ready.
    const closed = await freePort();
    unready = await startServe(serveArgs(ports[3] as number), 30_000, {
      ...env,
      DURABLE_MCP_STORE: `postgres://postgres@127.0.0.1:${closed}/test`,
    });
    const nginxPort = await freePort();
    const conf = nginxConfig(dir, nginxPort, ports);
    nginx = spawn(NGINX as string, ['-p', dir, '-e', join(dir, 'error.log'), '-c', conf], {
      stdio: 'inherit',
    });
    url = `http://127.0.0.1:${nginxPort}/mcp`;
    await waitUntil(
      async () => (await fetch(url.replace('/mcp', '/nothing'))).status === 404,
      15_000,
      'nginx',
    );
    // A task that waits for input, followed by push through nginx; left idle until the last-but-one test.
    const created = await rpc(
      url,
      answers,
      'tools/call',
      { name: 'ask_memo_job', arguments: { ms: 50 } },
      'ask_memo_job',
    );
    pushTask = String(created?.taskId);
    await waitUntil(
      async () =>
        (await rpc(url, answers, 'tasks/get', { taskId: pushTask }, pushTask))?.status === 'input_required',
      20_000,
      'the pushed task to ask for input',
    );
    stream = listen(url, [pushTask]);
    await waitUntil(async () => stream.messages().length > 0, 10_000, 'the subscription ack');
    streamOpenedAt = Date.now();
  }, 120_000);

  afterAll(async () => {
    stream?.close();
    nginx?.kill('SIGTERM');
    for (const p of [...replicas, ...retired, unready])
      if (p !== undefined && p.child.exitCode === null) p.child.kill('SIGKILL');
    await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`).catch(() => undefined);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('nginx in front of three replicas', () => {
    it('creates, answers and cancels tasks through nginx, on different replicas', async () => {
      const asked: string[] = [];
      const long: string[] = [];
      for (let i = 0; i < 6; i += 1) {
        asked.push(
          String(
            (
              await rpc(
                url,
                answers,
                'tools/call',
                { name: 'ask_memo_job', arguments: { ms: 50 } },
                'ask_memo_job',
              )
            )?.taskId,
          ),
        );
        long.push(
          String(
            (
              await rpc(
                url,
                answers,
                'tools/call',
                { name: 'memo_job', arguments: { ms: 60_000 } },
                'memo_job',
              )
            )?.taskId,
          ),
        );
      }
      for (const taskId of asked) {
        await waitUntil(
          async () => (await rpc(url, answers, 'tasks/get', { taskId }, taskId))?.status === 'input_required',
          20_000,
          `${taskId} to ask`,
        );
        await rpc(
          url,
          answers,
          'tasks/update',
          { taskId, inputResponses: { go: { action: 'accept', content: { go: true } } } },
          taskId,
        );
      }
      for (const taskId of long) await rpc(url, answers, 'tasks/cancel', { taskId }, taskId);
      for (const taskId of [...asked, ...long]) {
        await waitUntil(
          async () =>
            ['completed', 'cancelled'].includes(
              String((await rpc(url, answers, 'tasks/get', { taskId }, taskId))?.status),
            ),
          30_000,
          `${taskId} to end`,
        );
      }
      const final = await Promise.all(
        asked.map((taskId) => rpc(url, answers, 'tasks/get', { taskId }, taskId)),
      );
      expect(final.map((t) => t?.status)).toEqual(asked.map(() => 'completed'));
      const cancelled = await Promise.all(
        long.map((taskId) => rpc(url, answers, 'tasks/get', { taskId }, taskId)),
      );
      expect(cancelled.map((t) => t?.status)).toEqual(long.map(() => 'cancelled'));
      // Round robin spread each kind of request over the replicas: any replica serves any task.
      for (const method of ['tools/call', 'tasks/update', 'tasks/cancel', 'tasks/get'])
        expect(servedBy(replicas, method), method).toBeGreaterThanOrEqual(2);
      expect(answers.filter((a) => a.status !== 200 || a.error !== undefined)).toEqual([]);
    }, 180_000);

    it('keeps /metrics and the probes off the public side', async () => {
      const base = url.replace(/\/mcp$/, '');
      expect((await fetch(`${base}/metrics`)).status).toBe(404);
      expect((await fetch(`${base}/readyz`)).status).toBe(404);
      // They are there on the replicas themselves.
      expect((await direct(ports[0] as number, '/metrics')).status).toBe(200);
    });

    it("serves the operators' /admin through nginx to the allowed network only", async () => {
      const port = Number(new URL(url).port);
      const page = await oneShot(port, { path: '/admin' });
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      const session = await oneShot(port, { path: '/admin/api/v1/session' });
      expect(session.status).toBe(200);
      expect(JSON.parse(session.body)).toMatchObject({ operator: { tenants: 'all' } });
      expect((await oneShot(port, { path: '/admin/ui/dashboard.css' })).status).toBe(200);
      // The operators' event stream passes through as it is written (its first event arrives while it is open).
      let streamed = '';
      const events = await holdRequest(port, {
        path: '/admin/api/v1/events',
        method: 'GET',
        onData: (t) => (streamed += t),
      });
      expect(events.status).toBe(200);
      await waitUntil(async () => streamed.length > 0, 10_000, 'the operator event stream to send');
      events.close();
      // From any other address: refused by nginx, whatever the replica would say.
      for (const path of ['/admin', '/admin/api/v1/session', '/admin/ui/dashboard.css'])
        expect((await oneShot(port, { path, from: '127.0.0.2' })).status, path).toBe(403);
      expect((await oneShot(port, { path: '/administrator' })).status).toBe(404);
    });

    it('keeps a replica whose store does not answer not ready, and no client gets an answer from it', async () => {
      const probe = await direct(ports[3] as number, '/readyz');
      expect(probe.status).toBe(503);
      expect(await probe.json()).toMatchObject({ reason: 'store unreachable' });
      expect((await direct(ports[3] as number, '/healthz')).status).toBe(200);
      const quick = await Promise.all(Array.from({ length: 12 }, () => rpc(url, answers, 'tools/list', {})));
      expect(quick.every((r) => Array.isArray(r?.tools))).toBe(true);
      expect(answers.filter((a) => a.status !== 200 || a.error !== undefined)).toEqual([]);
      expect(unready.stderr()).toMatch(/store/);
    });

    it(
      'pushes a task update through nginx on a stream idle for 90 s',
      async () => {
        const idleUntil = streamOpenedAt + IDLE_MS;
        await sleep(Math.max(0, idleUntil - Date.now()));
        // Nothing but keep-alive comments, the ack and the task as it was (waiting for input) while idle.
        const idle = stream.messages();
        expect(idle[0]?.message.method).toBe('notifications/subscriptions/acknowledged');
        expect(idle.slice(1).map((m) => (m.message.params as Json).status)).toEqual(
          idle.slice(1).map(() => 'input_required'),
        );
        // Keep-alives every 15 s (--keep-alive-ms) held the stream open past nginx's 60 s read timeout.
        expect(stream.lines.filter((l) => l.line === ': keep-alive').length).toBeGreaterThanOrEqual(
          Math.floor(IDLE_MS / 15_000) - 1,
        );
        await rpc(
          url,
          answers,
          'tasks/update',
          { taskId: pushTask, inputResponses: { go: { action: 'accept', content: { go: true } } } },
          pushTask,
        );
        await waitUntil(
          async () =>
            stream.messages().some((m) => (m.message.params as Json | undefined)?.status === 'completed'),
          30_000,
          'the completion pushed on the idle stream',
        );
        // The first news of the task came through nginx after the stream had been idle for the whole time.
        const moved = stream
          .messages()
          .slice(1)
          .find((m) => (m.message.params as Json).status !== 'input_required');
        expect(moved?.message.method).toBe('notifications/tasks');
        expect((moved?.at ?? 0) - streamOpenedAt).toBeGreaterThanOrEqual(IDLE_MS);
      },
      IDLE_MS + 60_000,
    );

    it('restarts every replica under steady traffic: no non-2xx answer, no lost task', async () => {
      stream.close();
      const before = answers.length;
      const created: string[] = [];
      let running = true;
      const traffic = Array.from({ length: 3 }, async () => {
        while (running) {
          const task = await rpc(
            url,
            answers,
            'tools/call',
            { name: 'memo_job', arguments: { ms: 100 } },
            'memo_job',
          );
          if (typeof task?.taskId === 'string') created.push(task.taskId);
          const some = created[Math.floor(Math.random() * created.length)];
          if (some !== undefined) await rpc(url, answers, 'tasks/get', { taskId: some }, some);
          await rpc(url, answers, 'tools/list', {});
        }
      });
      await sleep(1_000);
      for (let i = 0; i < replicas.length; i += 1) {
        const old = replicas[i] as ServeProcess;
        old.child.kill('SIGTERM');
        expect(await old.exited).toBe(0);
        retired.push(old);
        replicas[i] = await startServe(serveArgs(ports[i] as number), 30_000, env);
        await waitUntil(
          async () => (await direct(ports[i] as number, '/readyz')).status === 200,
          30_000,
          'ready',
        );
        // Long enough for nginx to send this replica traffic again (its fail_timeout) before the next one goes.
        await sleep(6_000);
      }
      running = false;
      await Promise.all(traffic);
      const during = answers.slice(before);
      expect(during.length).toBeGreaterThan(100);
      expect(during.filter((a) => a.status !== 200 || a.error !== undefined)).toEqual([]);
      // Every task created through the restarts completes.
      for (const taskId of created) {
        await waitUntil(
          async () => (await rpc(url, answers, 'tasks/get', { taskId }, taskId))?.status === 'completed',
          60_000,
          `${taskId} to complete`,
        );
      }
      // And the store holds each of them exactly once, completed.
      const { rows } = await admin.query<{ n: string; done: string }>(
        `SELECT count(*) AS n, count(*) FILTER (WHERE status = 'completed') AS done FROM ${SCHEMA}.tasks
          WHERE id = ANY($1)`,
        [created],
      );
      expect({ n: Number(rows[0]?.n), done: Number(rows[0]?.done) }).toEqual({
        n: created.length,
        done: created.length,
      });
    }, 180_000);
  });
}
