import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { waitUntil } from '../support/admin-api.js';
import { BIN, envelope } from '../support/cli.js';

describe('durable-mcp serve --stdio', () => {
  it('answers newline-delimited JSON-RPC with the same dispatcher and rules', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-stdio-'));
    const child = spawn(process.execPath, [BIN, 'serve', '--stdio', '--store', join(dir, 'tasks.db')], {
      stdio: 'pipe',
    });
    const lines = createInterface({ input: child.stdout });
    const replies: Record<string, unknown>[] = [];
    lines.on('line', (l) => replies.push(JSON.parse(l) as Record<string, unknown>));
    const send = (msg: unknown): boolean => child.stdin.write(`${JSON.stringify(msg)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope() } });
    send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'x' }, _meta: envelope() },
    });
    send({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} });
    send({ jsonrpc: '2.0', id: 4, method: 'ping', params: { _meta: envelope() } });
    child.stdin.write('not json\n');
    child.stdin.end();
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    rmSync(dir, { recursive: true, force: true });
    expect(code).toBe(0);
    const byId = (id: number) => replies.find((r) => r.id === id);
    expect(byId(1)).toMatchObject({ result: { resultType: 'complete', supportedVersions: ['2026-07-28'] } });
    expect(byId(2)).toMatchObject({ result: { content: [{ type: 'text', text: 'x' }] } });
    expect(byId(3)).toMatchObject({ error: { code: -32602 } });
    expect(byId(4)).toMatchObject({ error: { code: -32601 } });
    expect(replies.some((r) => !('id' in r) && (r.error as { code?: number })?.code === -32700)).toBe(true);
  });

  const TOOLS = fileURLToPath(new URL('../fixtures/gateway/upstream-modern.mjs', import.meta.url));

  /** `serve --stdio` on a fresh store with `args`; its answers by id, and its exit (code, ms after its input ended). */
  function stdioServer(args: string[]) {
    const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-stdio-'));
    const child = spawn(
      process.execPath,
      [BIN, 'serve', '--stdio', '--store', join(dir, 'tasks.db'), ...args],
      {
        stdio: ['pipe', 'pipe', 'ignore'],
      },
    );
    const replies: Record<string, unknown>[] = [];
    createInterface({ input: child.stdout }).on('line', (l) =>
      replies.push(JSON.parse(l) as Record<string, unknown>),
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    return {
      send: (msg: unknown): boolean => child.stdin.write(`${JSON.stringify(msg)}\n`),
      replies,
      byId: (id: number) => replies.find((r) => r.id === id),
      /** Ends its input; resolves with its exit code and how long it took, or kills it after `ms`. */
      async endInput(ms: number): Promise<{ code: number | null; ms: number }> {
        const started = Date.now();
        child.stdin.end();
        const timer = setTimeout(() => child.kill('SIGKILL'), ms);
        const code = await exited;
        clearTimeout(timer);
        rmSync(dir, { recursive: true, force: true });
        return { code, ms: Date.now() - started };
      },
    };
  }

  const call = (id: number, ms: number) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'slow_sum', arguments: { a: 2, b: 3, ms }, _meta: envelope() },
  });

  it('ends an open subscriptions/listen and exits once its input ends', async () => {
    const server = stdioServer(['--tools', TOOLS]);
    server.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'subscriptions/listen',
      params: { notifications: { toolsListChanged: true }, _meta: envelope() },
    });
    await waitUntil(
      async () => server.replies.some((r) => r.method === 'notifications/subscriptions/acknowledged'),
      'the subscription acknowledged',
    );
    // Before, the open stream kept the process alive for good: a parent that died left it running.
    const { code } = await server.endInput(20_000);
    expect(code).toBe(0);
    expect(server.byId(1)).toMatchObject({ result: { resultType: 'complete' } });
  });

  it('answers a call still running when its input ends, and aborts one past --shutdown-grace-ms', async () => {
    const piped = stdioServer(['--tools', TOOLS]);
    piped.send(call(1, 600));
    const answered = await piped.endInput(20_000);
    expect(answered.code).toBe(0);
    expect(piped.byId(1)).toMatchObject({ result: { structuredContent: { sum: 5 } } });

    const cut = stdioServer(['--tools', TOOLS, '--shutdown-grace-ms', '300']);
    cut.send(call(1, 120_000));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const stopped = await cut.endInput(30_000);
    expect(stopped.code).toBe(0);
    // Far sooner than the call's two minutes: it was aborted after the grace.
    expect(stopped.ms).toBeLessThan(20_000);
    expect(cut.byId(1)).toBeDefined();
    expect(cut.byId(1)).not.toMatchObject({ result: { structuredContent: { sum: 5 } } });
  });
});
