// Metrics and logs of a real server process: names and labels, values that move as tasks run, no secrets in logs.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client-entry.js';
import { startServe, type ServeProcess } from '../support/cli.js';

const TOKEN = 'observability-secret-token-42';
let dir: string;
let server: ServeProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'durable-mcp-obs-'));
  const tokens = join(dir, 'tokens.json');
  writeFileSync(tokens, JSON.stringify({ tokens: [{ token: TOKEN, tenant: 'acme', principal: 'alice' }] }));
  server = await startServe(
    // Task counts read on every scrape, so they move between two scrapes a moment apart.
    [
      '--port',
      '0',
      '--store',
      join(dir, 'tasks.db'),
      '--auth',
      tokens,
      '--log-level',
      'debug',
      '--metrics-stats-interval-ms',
      '0',
    ],
    15_000,
    {
      DURABLE_MCP_DEMO_OUTLINE_MS: '50',
    },
  );
});

afterAll(async () => {
  server.child.kill('SIGTERM');
  await server.exited;
  rmSync(dir, { recursive: true, force: true });
});

const scrape = async (): Promise<string> => (await fetch(`${server.origin}/metrics`)).text();
const value = (text: string, series: string): number => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
};

describe('observability', () => {
  it('exposes Prometheus metrics whose values move as tasks run', async () => {
    const before = await scrape();
    for (const name of [
      'durable_mcp_tasks',
      'durable_mcp_task_creations_total',
      'durable_mcp_task_runs_total',
      'durable_mcp_task_run_duration_seconds',
      'durable_mcp_lease_takeovers_total',
      'durable_mcp_runnable_backlog',
      'durable_mcp_input_waits',
      'durable_mcp_http_requests_total',
      'durable_mcp_open_subscriptions',
    ]) {
      expect(before).toContain(`# TYPE ${name} `);
    }
    const client = createClient({
      url: server.url,
      token: TOKEN,
      onInput: () => ({ approve_outline: { action: 'accept', content: { approved: true } } }),
    });
    const call = await client.callTool('generate_report', {
      size: 'small',
      note: 'PAYLOAD-MARKER-9',
    } as never);
    if (call.kind !== 'task') throw new Error('expected a task');
    expect((await call.task.result()).status).toBe('completed');
    const after = await scrape();
    expect(value(after, 'durable_mcp_task_creations_total{tool="generate_report"}')).toBe(
      value(before, 'durable_mcp_task_creations_total{tool="generate_report"}') + 1,
    );
    expect(value(after, 'durable_mcp_tasks{status="completed"}')).toBeGreaterThanOrEqual(1);
    expect(value(after, 'durable_mcp_task_runs_total{outcome="input_required"}')).toBeGreaterThanOrEqual(1);
    expect(value(after, 'durable_mcp_task_runs_total{outcome="completed"}')).toBeGreaterThanOrEqual(1);
    expect(
      value(after, 'durable_mcp_http_requests_total{method="tools/call",code="200"}'),
    ).toBeGreaterThanOrEqual(1);
    // A refused credential is counted too.
    await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(
      value(await scrape(), 'durable_mcp_access_denied_total{event="auth.denied"}'),
    ).toBeGreaterThanOrEqual(1);
  });

  it('logs structured JSON lines with task ids, never tokens or payloads', async () => {
    await new Promise((r) => setTimeout(r, 200));
    const lines = server
      .stderr()
      .split('\n')
      .filter((l) => l.startsWith('{'));
    expect(lines.length).toBeGreaterThan(0);
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(
      parsed.some((l) => l.type === 'audit' && l.event === 'task.created' && typeof l.taskId === 'string'),
    ).toBe(true);
    expect(parsed.some((l) => l.msg === 'request' && l.method === 'tools/call')).toBe(true);
    const all = server.stderr();
    expect(all).not.toContain(TOKEN);
    expect(all).not.toContain('PAYLOAD-MARKER-9');
    expect(all).not.toContain('approved');
  });
});
