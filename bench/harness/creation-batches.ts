// The creation batches a pg row's replicas committed during a run, from their /metrics (the store's counters
// durable_mcp_store_creation_batch*_total): the mean batch `b` and its mean round trip, which the capacity model's
// pipeline bound reads (docs/scaling.md).

/** The three counters of one scrape, summed over the replicas. */
export interface BatchTotals {
  batches: number;
  tasks: number;
  seconds: number;
}

const SERIES: Record<string, keyof BatchTotals> = {
  durable_mcp_store_creation_batches_total: 'batches',
  durable_mcp_store_creation_batch_tasks_total: 'tasks',
  durable_mcp_store_creation_batch_seconds_total: 'seconds',
};

/** The counters in a /metrics text; undefined when it has none of them (a store that keeps none). */
export function parseBatchTotals(text: string): BatchTotals | undefined {
  const totals: BatchTotals = { batches: 0, tasks: 0, seconds: 0 };
  let seen = 0;
  for (const line of text.split('\n')) {
    const [name, value] = line.split(' ');
    const field = name === undefined ? undefined : SERIES[name];
    if (field === undefined || value === undefined) continue;
    totals[field] = Number(value);
    seen += 1;
  }
  return seen === 3 ? totals : undefined;
}

/** The /metrics URL of a replica whose MCP endpoint is `url`. */
const metricsUrl = (url: string): string => new URL('/metrics', url).toString();

/** The replicas' counters, summed; undefined when one of them cannot be read. */
export async function readBatchTotals(urls: readonly string[]): Promise<BatchTotals | undefined> {
  try {
    const each = await Promise.all(
      urls.map(async (url) => {
        const res = await fetch(metricsUrl(url), { signal: AbortSignal.timeout(5_000) });
        return res.ok ? parseBatchTotals(await res.text()) : undefined;
      }),
    );
    if (each.some((t) => t === undefined)) return undefined;
    return (each as BatchTotals[]).reduce((a, b) => ({
      batches: a.batches + b.batches,
      tasks: a.tasks + b.tasks,
      seconds: a.seconds + b.seconds,
    }));
  } catch {
    return undefined;
  }
}

/** Tasks per batch and a batch's mean round trip (ms) between two readings; nulls when no batch ended. */
export function batchFigures(
  before: BatchTotals | undefined,
  after: BatchTotals | undefined,
): { batchTasks: number | null; batchMs: number | null } {
  const batches = before === undefined || after === undefined ? 0 : after.batches - before.batches;
  if (batches <= 0) return { batchTasks: null, batchMs: null };
  const tasks = after!.tasks - before!.tasks;
  const seconds = after!.seconds - before!.seconds;
  return {
    batchTasks: Math.round((tasks / batches) * 100) / 100,
    batchMs: Math.round(((seconds * 1000) / batches) * 1000) / 1000,
  };
}
