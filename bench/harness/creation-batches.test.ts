// Reading the replicas' creation batch counters off /metrics, and the row's figures between two readings.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { batchFigures, parseBatchTotals, readBatchTotals } from './creation-batches.js';

const text = (batches: number, tasks: number, seconds: number) =>
  [
    '# HELP durable_mcp_store_creation_batches_total Creation batches',
    '# TYPE durable_mcp_store_creation_batches_total counter',
    `durable_mcp_store_creation_batches_total ${batches}`,
    `durable_mcp_store_creation_batch_tasks_total ${tasks}`,
    `durable_mcp_store_creation_batch_seconds_total ${seconds}`,
    'durable_mcp_tasks{status="working"} 3',
  ].join('\n');

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A replica stand-in serving `body()` at /metrics; its MCP URL. */
async function replica(body: () => string | undefined): Promise<string> {
  const server = createServer((req, res) => {
    const b = body();
    if (req.url === '/metrics' && b !== undefined) res.writeHead(200).end(b);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

describe('creation batches of a pg row', () => {
  it('parses the three counters, and nothing from a store that keeps none', () => {
    expect(parseBatchTotals(text(4, 60, 0.012))).toEqual({ batches: 4, tasks: 60, seconds: 0.012 });
    expect(parseBatchTotals('durable_mcp_tasks{status="working"} 3\n')).toBeUndefined();
  });

  it('sums the replicas, and gives up when one cannot be read', async () => {
    const a = await replica(() => text(2, 30, 0.01));
    const b = await replica(() => text(3, 20, 0.02));
    expect(await readBatchTotals([a, b])).toEqual({ batches: 5, tasks: 50, seconds: 0.03 });
    const none = await replica(() => undefined);
    expect(await readBatchTotals([a, none])).toBeUndefined();
  });

  it('gives creations per batch and a batch’s round trip between two readings, nulls when no batch ended', () => {
    const before = { batches: 10, tasks: 100, seconds: 0.05 };
    expect(batchFigures(before, { batches: 30, tasks: 420, seconds: 0.11 })).toEqual({
      batchTasks: 16,
      batchMs: 3,
    });
    expect(batchFigures(before, before)).toEqual({ batchTasks: null, batchMs: null });
    expect(batchFigures(undefined, before)).toEqual({ batchTasks: null, batchMs: null });
  });
});
