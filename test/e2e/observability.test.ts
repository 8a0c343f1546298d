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
      'durable_mcp_task_runs_started_total',
      'durable_mcp_task_failures_total',
      'durable_mcp_step_retries_total',
      'durable_mcp_task_run_duration_seconds',
      'durable_mcp_tool_run_duration_seconds',
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
    // Two runs of the tool: one asks for input, the one after the answer completes.
    const runs = (outcome: string) =>
      `durable_mcp_task_runs_total{tool="generate_report",outcome="${outcome}"}`;
    expect(value(after, runs('input_required'))).toBe(value(before, runs('input_required')) + 1);
    expect(value(after, runs('completed'))).toBe(value(before, runs('completed')) + 1);
    const started = 'durable_mcp_task_runs_started_total{tool="generate_report"}';
    expect(value(after, started)).toBe(value(before, started) + 2);
    const durations = 'durable_mcp_tool_run_duration_seconds_count{tool="generate_report"}';
    expect(value(after, durations)).toBe(value(before, durations) + 2);
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

  it('counts failed step attempts that will be retried under their tool', async () => {
    const retries = 'durable_mcp_step_retries_total{tool="remind_me"}';
    const before = value(await scrape(), retries);
    const client = createClient({ url: server.url, token: TOKEN });
    // The first delivery fails; the next attempt is 30 s away (the task waits in the store meanwhile).
    const call = await client.callTool('remind_me', {
      text: 'stand up',
      inSeconds: 0,
      flakyAttempts: 1,
    } as never);
    if (call.kind !== 'task') throw new Error('expected a task');
    // The retry is counted once the failure is kept, the run's end once its ending write is made: wait for both.
    const waiting = 'durable_mcp_task_runs_total{tool="remind_me",outcome="waiting"}';
    let text = await scrape();
    for (let i = 0; i < 100 && (value(text, retries) === before || value(text, waiting) === 0); i++) {
      await new Promise((r) => setTimeout(r, 50));
      text = await scrape();
    }
    expect(value(text, retries)).toBe(before + 1);
    expect(value(text, waiting)).toBe(1);
    expect(text).not.toContain('tool="other"');
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
