// /metrics on a real SQLite store: the task gauges follow the store, read at most once per stats interval.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSqliteTaskStore } from '../stores/sqlite/task-store.js';
import { newTask } from '../stores/task-store.contract.js';
import type { TaskStore } from '../tasks/store.js';
import { createMetrics, type MetricsOptions } from './metrics.js';

const T0 = 1_700_000_000_000;
const ALICE = { tenant: 'acme', principal: 'alice' };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A store in a temp file and its /metrics on a loopback port; `now` drives both the stats and their interval. */
async function serveMetrics(options: MetricsOptions) {
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-metrics-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const store: TaskStore = createSqliteTaskStore({ path: join(dir, 'tasks.db') });
  cleanups.push(() => store.close());
  const reads = vi.spyOn(store, 'stats');
  const clock = { now: T0 };
  const metrics = createMetrics(store, () => clock.now, options);
  const server: Server = createServer((req, res) => {
    if (!metrics.route(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  const scrape = async (): Promise<Record<string, number>> => {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const series: Record<string, number> = {};
    for (const line of text.split('\n')) {
      const match = /^(durable_mcp_(?:tasks|runnable_backlog|input_waits)\S*) (\S+)$/.exec(line);
      if (match?.[1] !== undefined) series[match[1]] = Number(match[2]);
    }
    return series;
  };
  return { store, reads, clock, scrape, url: `http://127.0.0.1:${port}/metrics` };
}

const gauges = (g: { working: number; input: number; completed: number; backlog: number }) => ({
  'durable_mcp_tasks{status="working"}': g.working,
  'durable_mcp_tasks{status="input_required"}': g.input,
  'durable_mcp_tasks{status="completed"}': g.completed,
  'durable_mcp_tasks{status="failed"}': 0,
  'durable_mcp_tasks{status="cancelled"}': 0,
  durable_mcp_runnable_backlog: g.backlog,
  durable_mcp_input_waits: g.input,
});

describe('metrics: task gauges', () => {
  it('follow tasks as they are created, run, suspended and completed', async () => {
    const { store, scrape } = await serveMetrics({ statsIntervalMs: 0 });
    expect(await scrape()).toEqual(gauges({ working: 0, input: 0, completed: 0, backlog: 0 }));
    const a = await store.create(newTask({ createdAt: T0 }));
    // Another owner's: answered, `a` goes back to the head of the line rather than behind its owner's own task.
    await store.create(newTask({ createdAt: T0 + 1, owner: { tenant: 'acme', principal: 'bob' } }));
    expect(await scrape()).toEqual(gauges({ working: 2, input: 0, completed: 0, backlog: 2 }));
    const run = await store.claim('w', 30_000, T0);
    expect(run?.id).toBe(a.id);
    expect(await scrape()).toEqual(gauges({ working: 2, input: 0, completed: 0, backlog: 1 }));
    await store.finish(a.id, 1, { kind: 'input_required', requests: { k: {} } }, T0);
    expect(await scrape()).toEqual(gauges({ working: 1, input: 1, completed: 0, backlog: 1 }));
    await store.answer(a.id, ALICE, { k: { action: 'accept' } }, T0);
    const again = await store.claim('w', 30_000, T0);
    expect(again?.id).toBe(a.id);
    await store.finish(a.id, 2, { kind: 'completed', result: {} }, T0);
    expect(await scrape()).toEqual(gauges({ working: 1, input: 0, completed: 1, backlog: 1 }));
  });

  it('are read from the store at most once per interval, whatever the number of scrapes', async () => {
    const { store, reads, clock, scrape } = await serveMetrics({ statsIntervalMs: 5_000 });
    expect(await scrape()).toEqual(gauges({ working: 0, input: 0, completed: 0, backlog: 0 }));
    await store.create(newTask({ createdAt: T0 }));
    clock.now = T0 + 4_999;
    const burst = await Promise.all([scrape(), scrape(), scrape()]);
    expect(burst).toEqual(Array(3).fill(gauges({ working: 0, input: 0, completed: 0, backlog: 0 })));
    expect(reads).toHaveBeenCalledTimes(1);
    clock.now = T0 + 5_000;
    expect(await scrape()).toEqual(gauges({ working: 1, input: 0, completed: 0, backlog: 1 }));
    expect(reads).toHaveBeenCalledTimes(2);
  });

  it('keep their last values and answer 200 when the store cannot be read', async () => {
    const { store, reads, clock, scrape } = await serveMetrics({ statsIntervalMs: 1_000 });
    await store.create(newTask({ createdAt: T0 }));
    expect(await scrape()).toEqual(gauges({ working: 1, input: 0, completed: 0, backlog: 1 }));
    reads.mockRejectedValue(new Error('store unreachable'));
    clock.now = T0 + 1_000;
    expect(await scrape()).toEqual(gauges({ working: 1, input: 0, completed: 0, backlog: 1 }));
    expect(reads).toHaveBeenCalledTimes(2);
  });
});

describe('metrics: slot waits', () => {
  it('count the tasks parked for a slot of their concurrency key', async () => {
    const { store, url } = await serveMetrics({ statsIntervalMs: 0 });
    const slotWaits = async (): Promise<number | undefined> => {
      const line = (await (await fetch(url)).text())
        .split('\n')
        .find((l) => l.startsWith('durable_mcp_slot_waits '));
      return line === undefined ? undefined : Number(line.split(' ')[1]);
    };
    expect(await slotWaits()).toBe(0);
    const one = { key: 'deploy', limit: 1 };
    await store.create(newTask({ createdAt: T0, concurrency: one }));
    await store.create(newTask({ createdAt: T0, concurrency: one }));
    await store.claim('w', 30_000, T0);
    expect(await store.claim('w', 30_000, T0)).toBeUndefined();
    expect(await slotWaits()).toBe(1);
  });

  it('count them by tool, tools not served adding up under "other"', async () => {
    const { store, url } = await serveMetrics({ statsIntervalMs: 0, tools: ['deploy'] });
    const byTool = async (): Promise<string[]> =>
      (await (await fetch(url)).text())
        .split('\n')
        .filter((l) => l.startsWith('durable_mcp_tool_slot_waits{'));
    expect(await byTool()).toEqual([]);
    const one = { key: 'deploy', limit: 1 };
    for (const tool of ['deploy', 'deploy', 'deploy', 'echo', 'sync'])
      await store.create(newTask({ createdAt: T0, tool, concurrency: one }));
    await store.claim('w', 30_000, T0);
    expect(await store.claim('w', 30_000, T0)).toBeUndefined();
    expect(await byTool()).toEqual([
      'durable_mcp_tool_slot_waits{tool="deploy"} 2',
      'durable_mcp_tool_slot_waits{tool="other"} 2',
    ]);
  });
});

describe('metrics: rate waits', () => {
  it('count the tasks waiting for the start reserved under their rate limit, by tool', async () => {
    const { store, url } = await serveMetrics({ statsIntervalMs: 0, tools: ['charge'] });
    const byTool = async (): Promise<string[]> =>
      (await (await fetch(url)).text())
        .split('\n')
        .filter((l) => l.startsWith('durable_mcp_tool_rate_waits{'));
    expect(await byTool()).toEqual([]);
    const rateLimit = { key: 'payments', limit: 1, periodMs: 1_000 };
    for (const tool of ['charge', 'charge', 'charge', 'refund'])
      await store.create(newTask({ createdAt: T0, tool, rateLimit }));
    // The first starts; the next claim reserves the others' starts, one a second, and finds none due.
    expect(await store.claim('w', 30_000, T0)).toBeDefined();
    expect(await store.claim('w', 30_000, T0)).toBeUndefined();
    expect(await byTool()).toEqual([
      'durable_mcp_tool_rate_waits{tool="charge"} 2',
      'durable_mcp_tool_rate_waits{tool="other"} 1',
    ]);
  });
});

describe('metrics: paused tasks', () => {
  it('count the tasks an operator’s pause holds back, by tool', async () => {
    const { store, url } = await serveMetrics({ statsIntervalMs: 0, tools: ['deploy'] });
    const byTool = async (): Promise<string[]> =>
      (await (await fetch(url)).text()).split('\n').filter((l) => l.startsWith('durable_mcp_tool_paused{'));
    expect(await byTool()).toEqual([]);
    const admin = store.admin;
    if (admin?.pause === undefined || admin.resume === undefined) throw new Error('expected pauses');
    await admin.pause({ tenants: 'all' }, { kind: 'tool', name: 'deploy' }, T0);
    for (let i = 0; i < 2; i++) await store.create(newTask({ createdAt: T0, tool: 'deploy' }));
    expect(await store.claim('w', 30_000, T0)).toBeUndefined();
    expect(await byTool()).toEqual(['durable_mcp_tool_paused{tool="deploy"} 2']);
    await admin.resume({ tenants: 'all' }, { kind: 'tool', name: 'deploy' }, T0);
    expect(await byTool()).toEqual([]);
  });
});

describe('metrics: bearer token', () => {
  it('answers 401 without the token (or with another), 200 with it', async () => {
    const { url } = await serveMetrics({ token: 'scrape-token-0123456789' });
    const bare = await fetch(url);
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await fetch(url, { headers: { authorization: 'Bearer scrape-token-012345678' } })).status).toBe(
      401,
    );
    expect((await fetch(url, { headers: { authorization: 'Basic scrape-token-0123456789' } })).status).toBe(
      401,
    );
    const ok = await fetch(url, { headers: { authorization: 'Bearer scrape-token-0123456789' } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('durable_mcp_build_info');
  });
});

describe('metrics: creation batches', () => {
  /** A scrape's creation batch series (name → value). */
  const batchSeries = async (url: string): Promise<Record<string, number>> => {
    const series: Record<string, number> = {};
    for (const line of (await (await fetch(url)).text()).split('\n')) {
      const match = /^(durable_mcp_store_creation_batch\S*) (\S+)$/.exec(line);
      if (match?.[1] !== undefined) series[match[1]] = Number(match[2]);
    }
    return series;
  };

  it('serve the store’s own totals on each scrape, and nothing for a store that keeps none', async () => {
    const { url } = await serveMetrics({ statsIntervalMs: 0 });
    expect(await batchSeries(url)).toEqual({});

    const totals = { batches: 0, tasks: 0, seconds: 0 };
    const store = { ...createSqliteTaskStore({ path: ':memory:' }), creationBatches: () => ({ ...totals }) };
    cleanups.push(() => store.close());
    const metrics = createMetrics(store);
    const server: Server = createServer((req, res) => {
      if (!metrics.route(req, res)) res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const own = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
    const series = (batches: number, tasks: number, seconds: number) => ({
      durable_mcp_store_creation_batches_total: batches,
      durable_mcp_store_creation_batch_tasks_total: tasks,
      durable_mcp_store_creation_batch_seconds_total: seconds,
    });
    expect(await batchSeries(own)).toEqual(series(0, 0, 0));
    Object.assign(totals, { batches: 3, tasks: 40, seconds: 0.012 });
    expect(await batchSeries(own)).toEqual(series(3, 40, 0.012));
    Object.assign(totals, { batches: 5, tasks: 41, seconds: 0.02 });
    expect(await batchSeries(own)).toEqual(series(5, 41, 0.02));
  });
});
