import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
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
});
