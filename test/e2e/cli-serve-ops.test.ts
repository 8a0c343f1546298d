// `serve` behind a balancer: /metrics on a port of its own or behind a bearer token, the HTTP keep-alive timeout
// (above the balancer's idle timeout) and the request body limit.
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { envelope, mcpHeaders, startServe, type ServeProcess } from '../support/cli.js';
import { oneShot, rawConnection } from '../support/raw-http.js';
import { parseSse } from '../support/http.js';

const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-ops-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const procs: ServeProcess[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) {
    if (p.child.exitCode === null) {
      p.child.kill('SIGKILL');
      await p.exited;
    }
  }
});

let files = 0;
async function serve(args: string[], env: Record<string, string> = {}): Promise<ServeProcess> {
  const p = await startServe(['--port', '0', '--store', join(dir, `t${files++}.db`), ...args], 15_000, env);
  procs.push(p);
  return p;
}

const TOKEN = 'metrics-scrape-token-0123';

describe('serve: metrics', () => {
  it('--metrics-port serves /metrics (and the probes) there, and the MCP port answers 404 for it', async () => {
    const p = await serve(['--metrics-port', '0'], { DURABLE_MCP_METRICS_TOKEN: TOKEN });
    const shown = /^metrics on (http:\/\/\S+\/metrics)$/m.exec(p.stdout())?.[1];
    expect(shown).toBeDefined();
    const metricsUrl = shown as string;
    expect(new URL(metricsUrl).port).not.toBe(new URL(p.url).port);
    expect((await fetch(`${p.origin}/metrics`)).status).toBe(404);
    // The token comes from DURABLE_MCP_METRICS_TOKEN here.
    expect((await fetch(metricsUrl)).status).toBe(401);
    const scraped = await fetch(metricsUrl, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('durable_mcp_build_info');
    const origin = new URL(metricsUrl).origin;
    expect((await fetch(`${origin}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${origin}/readyz`)).json()).toEqual({ status: 'ready' });
    expect((await fetch(`${origin}/mcp`)).status).toBe(404);
  });

  it('--metrics-token: /metrics on the MCP port answers 401 without the bearer token, 200 with it', async () => {
    const p = await serve(['--metrics-token', TOKEN]);
    const bare = await fetch(`${p.origin}/metrics`);
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const wrong = await fetch(`${p.origin}/metrics`, {
      headers: { authorization: 'Bearer nope-nope-nope-nope' },
    });
    expect(wrong.status).toBe(401);
    const right = await fetch(`${p.origin}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(right.status).toBe(200);
  });

  it('--metrics-port answers /metrics and /readyz to loopback names, IP addresses and --metrics-allowed-hosts only', async () => {
    const p = await serve(['--metrics-port', '0', '--metrics-allowed-hosts', 'prometheus.internal']);
    const metricsUrl = new URL(/^metrics on (http:\/\/\S+\/metrics)$/m.exec(p.stdout())?.[1] as string);
    const status = async (url: URL, path: string, host: string, origin?: string) =>
      (
        await oneShot(Number(url.port), {
          path,
          headers: origin === undefined ? { host } : { host, origin },
        })
      ).status;
    for (const path of ['/metrics', '/readyz']) {
      // A name that DNS rebinding points at the server is refused; an address cannot be rebound.
      expect(await status(metricsUrl, path, 'evil.example:9464'), path).toBe(403);
      expect(await status(metricsUrl, path, '10.1.2.3:9464', 'http://evil.example'), path).toBe(403);
      for (const host of [
        '10.1.2.3:9464',
        '10.1.2.3',
        '[fd00::5]:9464',
        'localhost:9464',
        'prometheus.internal',
      ])
        expect(await status(metricsUrl, path, host), `${path} ${host}`).toBe(200);
    }
    expect(await status(metricsUrl, '/healthz', 'evil.example')).toBe(200);
    // The MCP port keeps to its own names: loopback, the bound one and --allowed-hosts.
    const main = new URL(p.url);
    expect(await status(main, '/readyz', 'evil.example')).toBe(403);
    expect(await status(main, '/readyz', 'prometheus.internal')).toBe(403);
    expect(await status(main, '/readyz', `127.0.0.1:${main.port}`)).toBe(200);
    expect(await status(main, '/healthz', 'evil.example')).toBe(200);
  });

  it('refuses a short token, or metrics flags with --no-metrics, as usage errors', async () => {
    await expect(startServe(['--metrics-token', 'short'])).rejects.toThrow(/at least 16 characters/);
    await expect(startServe(['--no-metrics', '--metrics-port', '0'])).rejects.toThrow(/drop --no-metrics/);
    await expect(startServe(['--metrics-allowed-hosts', 'a.example'])).rejects.toThrow(/give both/);
  });
});

/** One keep-alive GET /healthz on a raw connection: its Keep-Alive header, and how long the server then kept it. */
async function idleConnection(origin: string): Promise<{ keepAlive: string | undefined; openMs: number }> {
  const { hostname, port } = new URL(origin);
  const socket = connect(Number(port), hostname);
  let text = '';
  let answered = 0;
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    if (answered === 0 && text.includes('{"status":"ok"}')) answered = Date.now();
  });
  socket.write(`GET /healthz HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: keep-alive\r\n\r\n`);
  await new Promise((resolve) => socket.once('close', resolve));
  return { keepAlive: /^keep-alive: (.*)\r$/im.exec(text)?.[1], openMs: Date.now() - answered };
}

describe('serve: HTTP connections and bodies', () => {
  it('keeps idle connections 65 s by default (above a balancer idle timeout of 60 s), or as --http-keep-alive-timeout-ms says', async () => {
    const byDefault = await serve([]);
    const header = await new Promise<string | undefined>((resolve, reject) => {
      request(`${byDefault.origin}/healthz`, (res) => {
        res.resume();
        resolve(res.headers['keep-alive'] as string | undefined);
      })
        .on('error', reject)
        .end();
    });
    expect(header).toBe('timeout=65');
    const short = await serve(['--http-keep-alive-timeout-ms', '1000']);
    const idle = await idleConnection(short.origin);
    expect(idle.keepAlive).toBe('timeout=1');
    // Closed by the server once idle for the timeout (Node checks idle sockets about every second).
    expect(idle.openMs).toBeGreaterThanOrEqual(900);
    expect(idle.openMs).toBeLessThan(4_000);
  });

  it('--max-body-mb bounds a request body (413 above it)', async () => {
    const p = await serve(['--max-body-mb', '1']);
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'x'.repeat(1_200_000) }, _meta: envelope() },
    });
    const res = await fetch(p.url, { method: 'POST', headers: mcpHeaders('tools/call', 'echo'), body });
    expect(res.status).toBe(413);
    await expect(startServe(['--max-body-mb', '0'])).rejects.toThrow(/--max-body-mb must be at least 1/);
  });

  it('--headers-timeout-ms, --max-connections-per-source and --trust-proxy bound what one client holds', async () => {
    const p = await serve(['--headers-timeout-ms', '500', '--max-connections-per-source', '1']);
    const port = Number(new URL(p.origin).port);
    const started = Date.now();
    const silent = rawConnection(port);
    await new Promise((resolve) => silent.socket.once('connect', resolve));
    // The silent connection is this address's one: another is closed as it arrives, another address is served.
    const second = rawConnection(port);
    expect(await second.closedWithin(3_000)).toBe(true);
    expect(second.text()).toBe('');
    expect((await oneShot(port, { from: '127.0.0.2' })).status).toBe(200);
    expect(await silent.closedWithin(8_000)).toBe(true);
    expect(silent.text()).toMatch(/^HTTP\/1\.1 408/);
    expect(Date.now() - started).toBeLessThan(5_000);
    await expect(startServe(['--trust-proxy', '10.0.0.0/8'])).rejects.toThrow(/give both/);
    await expect(
      startServe(['--max-connections-per-source', '4', '--trust-proxy', '10.0.0.0/33']),
    ).rejects.toThrow(/--trust-proxy: bad prefix length in "10.0.0.0\/33"/);
  });
});

describe('serve: bounds on what one task stores', () => {
  /** A tools/call from a client without the tasks extension: the task's ending, answered when it ends. */
  const call = async (url: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'remind_me', arguments: args, _meta: envelope() },
    });
    const res = await fetch(url, { method: 'POST', headers: mcpHeaders('tools/call', 'remind_me'), body });
    const text = await res.text();
    const last = res.headers.get('content-type')?.startsWith('text/event-stream')
      ? (parseSse(text).messages.at(-1) as Record<string, unknown>)
      : (JSON.parse(text) as Record<string, unknown>);
    return last;
  };

  it('--max-steps-per-task, --max-step-bytes and --max-result-bytes bound each task', async () => {
    const p = await serve(['--max-step-bytes', '4000', '--max-result-bytes', '1000']);
    const tooBigStep = await call(p.url, { text: 'x'.repeat(4_100), inSeconds: 0 });
    expect(tooBigStep.result).toMatchObject({
      isError: true,
      content: [
        {
          text: `step "deliver" returned 4112 bytes of JSON, over the limit for a step's value (max-step-bytes: 4000)`,
        },
      ],
    });
    const tooBigResult = await call(p.url, { text: 'x'.repeat(1_100), inSeconds: 0 });
    expect(tooBigResult.error).toMatchObject({
      code: -32603,
      message: expect.stringMatching(/^the result is \d+ bytes, over the limit \(max-result-bytes: 1000\)$/),
    });
    // The sleep (recorded, even one already over) is the task's one record: the step after it is refused.
    const one = await serve(['--max-steps-per-task', '1']);
    const tooManySteps = await call(one.url, { text: 'hi', inSeconds: 0 });
    expect(tooManySteps.result).toMatchObject({
      isError: true,
      content: [{ text: expect.stringMatching(/^step "deliver" was refused: .*\(max-steps-per-task: 1\)$/) }],
    });
  });

  it('--max-stored-bytes-per-principal refuses a call whose task would pass it', async () => {
    const p = await serve(['--max-stored-bytes-per-principal', '100']);
    const refused = await call(p.url, { text: 'x'.repeat(200), inSeconds: 0 });
    expect(refused.error).toMatchObject({ code: 429, data: { quota: 'stored-bytes', limit: 100 } });
    expect((await call(p.url, { text: 'hi', inSeconds: 0 })).result).toMatchObject({
      content: [{ text: 'Reminder: hi' }],
    });
    await expect(startServe(['--max-stored-bytes-per-principal', 'lots'])).rejects.toThrow(
      /--max-stored-bytes-per-principal must be a non-negative integer/,
    );
  });

  it('refuses a bound of 0 as a usage error', async () => {
    for (const flag of ['--max-steps-per-task', '--max-step-bytes', '--max-result-bytes'])
      await expect(startServe([flag, '0'])).rejects.toThrow(new RegExp(`${flag} must be at least 1`));
  });
});
