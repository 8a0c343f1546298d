// `serve --tool-concurrency TOOL=N` over a real process: a second task of the tool waits for the first's slot and says
// so, and /metrics counts it under the tool; a name the server does not serve is a usage error (exit 2).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../src/advanced.js';
import { killedAfterEach, serveFails, startServe } from '../support/cli.js';

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const WAITING = 'Waiting for a free slot of concurrency key "generate_report" to run.';
const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-tool-concurrency-'));
const procs = killedAfterEach();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('durable-mcp serve --tool-concurrency', () => {
  it('limits the runs of a tool: its second task waits for the first one’s slot', async () => {
    const p = await startServe(
      [
        '--port',
        '0',
        '--store',
        join(dir, 'tasks.db'),
        '--tool-concurrency',
        'generate_report=1',
        '--metrics-stats-interval-ms',
        '0',
      ],
      15_000,
      // The first task stays in its outline step (holding the slot) for the whole test.
      { DURABLE_MCP_DEMO_OUTLINE_MS: '20000' },
    );
    procs.push(p);
    const client = createHttpClient({ url: p.url, capabilities: TASKS });
    const call = async (): Promise<string> => {
      const { result } = await client.request('tools/call', { name: 'generate_report', arguments: {} });
      return (result as { taskId: string }).taskId;
    };
    const first = await call();
    const second = await call();
    const statusOf = async (taskId: string): Promise<Record<string, unknown>> =>
      (await client.request('tasks/get', { taskId })).result as Record<string, unknown>;
    const end = Date.now() + 10_000;
    for (;;) {
      const [a, b] = [await statusOf(first), await statusOf(second)];
      if (a.statusMessage === 'Preparing report outline.' && b.statusMessage === WAITING) break;
      if (Date.now() > end) throw new Error(`no wait seen: ${JSON.stringify([a, b])}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await statusOf(second)).status).toBe('working');
    // The waiting task is counted under its tool.
    const metrics = await (await fetch(`${p.origin}/metrics`)).text();
    expect(metrics).toContain('durable_mcp_tool_slot_waits{tool="generate_report"} 1');
  });

  it('refuses a tool the server does not serve, and a limit that is not a whole number from 1', async () => {
    const store = join(dir, 'refused.db');
    const unknown = await serveFails(['--store', store, '--tool-concurrency', 'no_such_tool=2']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--tool-concurrency: no tool "no_such_tool" is served/);
    const zero = await serveFails(['--store', store, '--tool-concurrency', 'generate_report=0']);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toMatch(/--tool-concurrency takes TOOL=N/);
  });
});
