import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { legacyConnect, legacyInitialize } from '../support/legacy-client.js';
import { envelope, mcpHeaders, startServe, type ServeProcess } from '../support/cli.js';
import { migrations as sqliteMigrations } from '../../src/stores/sqlite/migrations/index.js';
import { VERSION } from '../../src/version.js';

const dirs: string[] = [];
const procs: ServeProcess[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'durable-mcp-cli-'));
  dirs.push(d);
  return d;
};

afterEach(async () => {
  for (const p of procs.splice(0)) {
    if (p.child.exitCode === null) {
      p.child.kill('SIGKILL');
      await p.exited;
    }
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const callTool = (url: string, name: string, args: Record<string, unknown>) =>
  fetch(url, {
    method: 'POST',
    headers: mcpHeaders('tools/call', name),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name, arguments: args, _meta: envelope() },
    }),
  });

describe('durable-mcp serve', () => {
  it('prints its listening line, answers /healthz and serves the demo tools on the store file', async () => {
    const dir = tempDir();
    const p = await startServe(['--port', '0', '--store', join(dir, 'tasks.db')]);
    procs.push(p);
    expect(p.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect((await fetch(`${p.origin}/healthz`)).status).toBe(200);
    const res = await callTool(p.url, 'echo', { text: 'hi' });
    expect(await res.json()).toMatchObject({
      id: 1,
      result: { resultType: 'complete', content: [{ type: 'text', text: 'hi' }] },
    });
    expect(existsSync(join(dir, 'tasks.db'))).toBe(true);
    expect(p.stderr()).toMatch(/anonymous development mode/);
    // Its log names the release and the store, and every line names the replica that wrote it.
    const lines = p
      .stderr()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    // And the migration the store is at (its schema version).
    expect(lines.find((l) => l.msg === 'serving')).toMatchObject({
      version: VERSION,
      store: `SQLite ${join(dir, 'tasks.db')}`,
      migration: Math.max(...sqliteMigrations.map((m) => m.version)),
    });
    expect(lines.every((l) => l.instance === `${hostname()}:${p.child.pid}`)).toBe(true);
    // And its metrics, the process and the version.
    const metrics = await (await fetch(`${p.origin}/metrics`)).text();
    expect(metrics).toContain(`durable_mcp_build_info{version="${VERSION}"} 1`);
    expect(metrics).toMatch(/^durable_mcp_process_resident_memory_bytes \d+/m);
    expect(metrics).toMatch(/^durable_mcp_nodejs_eventloop_lag_p99_seconds /m);
  });

  it('in JWT mode, serves the protected resource metadata its 401 challenge points to (port 0 included)', async () => {
    const dir = tempDir();
    const { publicKey } = await generateKeyPair('ES256');
    const jwks = join(dir, 'jwks.json');
    writeFileSync(
      jwks,
      JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] }),
    );
    const issuer = 'https://auth.example.test';
    const p = await startServe([
      '--port',
      '0',
      '--store',
      join(dir, 'tasks.db'),
      '--jwt-issuer',
      issuer,
      '--jwks',
      jwks,
    ]);
    procs.push(p);
    const refused = await callTool(p.url, 'echo', { text: 'hi' });
    expect(refused.status).toBe(401);
    const challenge = refused.headers.get('www-authenticate') ?? '';
    const advertised = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    expect(advertised).toBe(`${p.origin}/.well-known/oauth-protected-resource/mcp`);
    const metadata = await fetch(advertised as string);
    expect(metadata.status).toBe(200);
    expect(await metadata.json()).toMatchObject({ resource: p.url, authorization_servers: [issuer] });
  });

  it('serves 2025-11-25 clients on the same endpoint, unless --no-legacy', async () => {
    const dir = tempDir();
    const both = await startServe(['--port', '0', '--store', join(dir, 'a.db')]);
    const modern = await startServe(['--port', '0', '--store', join(dir, 'b.db'), '--no-legacy']);
    procs.push(both, modern);
    const legacy = await legacyInitialize(both.url);
    expect(legacy.status).toBe(200);
    expect(legacy.headers.get('mcp-session-id')).toMatch(/\S/);
    const refused = await legacyInitialize(modern.url);
    expect(refused.headers.get('mcp-session-id')).toBeNull();
    expect(refused.status).toBeGreaterThanOrEqual(400);
  });

  it('finishes in-flight requests on SIGTERM, closes the store and exits 0', async () => {
    const dir = tempDir();
    const p = await startServe(['--port', '0', '--store', join(dir, 'tasks.db')]);
    procs.push(p);
    const pending = callTool(p.url, 'wait', { ms: 400 });
    await new Promise((r) => setTimeout(r, 100));
    p.child.kill('SIGTERM');
    const res = await pending;
    expect(res.status).toBe(200);
    expect(JSON.stringify(await res.json())).toContain('waited 400 ms');
    expect(await p.exited).toBe(0);
    // A cleanly closed WAL database leaves no -wal file behind.
    expect(existsSync(join(dir, 'tasks.db-wal'))).toBe(false);
  });

  it('does not wait on shutdown for a connection that never sent a request', async () => {
    const dir = tempDir();
    const p = await startServe(['--port', '0', '--store', join(dir, 'tasks.db')]);
    procs.push(p);
    const { port } = new URL(p.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const started = Date.now();
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(3_000);
    socket.destroy();
  });

  it('loads a tool set from a module path', async () => {
    const dir = tempDir();
    const mod = join(dir, 'tools.mjs');
    writeFileSync(
      mod,
      `export const tools = [{ name: 'shout', description: 'Upper-cases text', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, handler: ({ text }) => ({ content: [{ type: 'text', text: String(text).toUpperCase() }] }) }];\n`,
    );
    const p = await startServe(['--port', '0', '--store', join(dir, 'tasks.db'), '--tools', mod]);
    procs.push(p);
    const res = await callTool(p.url, 'shout', { text: 'quiet' });
    expect(JSON.stringify(await res.json())).toContain('QUIET');
  });

  it('--legacy-result-wait-ms bounds each 2025-11-25 tasks/result stream, which closes for the client to resume', async () => {
    const dir = tempDir();
    const p = await startServe([
      '--port',
      '0',
      '--store',
      join(dir, 'a.db'),
      '--legacy-result-wait-ms',
      '300',
    ]);
    procs.push(p);
    // generate_report waits for an approval nobody gives.
    const client = await legacyConnect(p.url);
    const created = await client.result('tools/call', {
      name: 'generate_report',
      arguments: {},
      task: { ttl: 60_000 },
    });
    const taskId = (created.task as { taskId: string }).taskId;
    const started = Date.now();
    const res = await fetch(p.url, {
      method: 'POST',
      headers: {
        ...client.headers,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tasks/result', params: { taskId } }),
    });
    const text = await res.text();
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(text).toMatch(/^id: tr1\./m);
    expect(text).toMatch(/^retry: \d+$/m);
    expect(text).not.toContain('"error"');
  });

  it('names a refused Host in the 403 and logs it once a minute, as a balancer rewriting Host would cause', async () => {
    const dir = tempDir();
    const p = await startServe(['--port', '0', '--store', join(dir, 'a.db')]);
    procs.push(p);
    const send = () =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          p.url,
          {
            method: 'POST',
            headers: { host: 'mcp_upstream', 'content-type': 'application/json', ...mcpHeaders('ping') },
          },
          (res) => {
            let body = '';
            res.on('data', (d: Buffer) => (body += d.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: envelope() } }));
      });
    for (let i = 0; i < 3; i++) {
      const { status, body } = await send();
      expect(status).toBe(403);
      expect(body).toContain('Host \\"mcp_upstream\\" is not allowed');
    }
    await expect.poll(() => p.stderr().includes('mcp_upstream'), { timeout: 5_000 }).toBe(true);
    const lines = p
      .stderr()
      .split('\n')
      .filter((l) => l.includes('request refused'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({
      level: 40,
      header: 'host',
      value: 'mcp_upstream',
    });
  });

  it('rejects bad flags with exit code 2 and a usage message', async () => {
    await expect(startServe(['--port', 'abc'])).rejects.toThrow(/--port must be/);
    await expect(startServe(['--legacy-result-wait-ms', '5'])).rejects.toThrow(
      /--legacy-result-wait-ms must be at least 100/,
    );
    await expect(startServe(['--tools', 'nope-not-a-set'])).rejects.toThrow(
      /built-in sets are demo, conformance/,
    );
  });
});
