// The operators' overview names the tasks that wait for a process running their tool version: created by a deploy of
// version 1 that runs no worker, then served by a deploy of version 2 only. Operators of every tenant see them;
// an operator of one tenant does not (they are counted over all tenants).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../src/advanced.js';
import { TOKENS, tokenFile } from '../support/admin-api.js';
import { startServe, type ServeProcess } from '../support/cli.js';

const TOOLS = fileURLToPath(new URL('../fixtures/tools/versioned-tools.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-waiting-'));
const procs: ServeProcess[] = [];
afterAll(async () => {
  for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
  rmSync(dir, { recursive: true, force: true });
});

async function deploy(version: string, extra: string[] = []): Promise<ServeProcess> {
  const tokens = join(dir, 'tokens.json');
  writeFileSync(tokens, tokenFile(true));
  const store = join(dir, 'tasks.db');
  const args = ['--port', '0', '--store', store, '--auth', tokens, '--tools', TOOLS, ...extra];
  const p = await startServe(args, 20_000, { DURABLE_MCP_TEST_TOOL_VERSION: version });
  procs.push(p);
  return p;
}

const overview = async (p: ServeProcess, token: string): Promise<Record<string, unknown>> =>
  (await (
    await fetch(`${p.origin}/admin/api/v1/overview`, { headers: { authorization: `Bearer ${token}` } })
  ).json()) as Record<string, unknown>;

describe('tasks waiting for their code', () => {
  it('are named in the overview for operators of every tenant', async () => {
    const old = await deploy('1', ['--concurrency', '0']);
    const client = createHttpClient({
      url: old.url,
      token: TOKENS.alice,
      capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    });
    const { result } = await client.request('tools/call', { name: 'versioned_job', arguments: {} });
    expect(result.resultType).toBe('task');
    old.child.kill('SIGTERM');
    await old.exited;
    const next = await deploy('2');
    await expect
      .poll(async () => (await overview(next, TOKENS.root)).waitingForCode, {
        timeout: 15_000,
        interval: 200,
      })
      .toEqual([{ tool: 'versioned_job', version: '1', count: 1 }]);
    // Counted over every tenant: an operator of tenant A alone is not shown them.
    expect((await overview(next, TOKENS.opsA)).waitingForCode).toBeUndefined();
  });
});
