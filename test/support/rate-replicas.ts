// The acceptance run of rate limits across replicas: three store instances on one storage (a SQLite file, a
// PostgreSQL schema), each with its own worker, share one key's rate while callers create tasks faster than it
// allows; the starts are read back from the store (each run's first step records when it started).
import { performance } from 'node:perf_hooks';
import type { TaskRunner } from '../../src/tasks/execution.js';
import type { TaskStore } from '../../src/tasks/store.js';
import type { NewTask } from '../../src/tasks/task.js';
import { newTaskId } from '../../src/tasks/ids.js';
import { createWorker, type Worker } from '../../src/worker/worker.js';

export interface RateRun {
  /** When each task's first run started (ms, from its stored step), sorted. */
  starts: number[];
  /** Tasks created. */
  created: number;
}

/** A task of key `key` (rate `limit` per `periodMs`), created now. */
const rated = (key: string, limit: number, periodMs: number): NewTask => ({
  id: newTaskId(),
  owner: { tenant: 'acme', principal: 'alice' },
  tool: 'charge',
  args: {},
  createdAt: Date.now(),
  ttlMs: 600_000,
  pollIntervalMs: 1_000,
  statusMessage: 'Queued.',
  replayAfterCrash: true,
  clientCapabilities: {},
  answers: {},
  rateLimit: { key, limit, periodMs },
});

/** Records when the run started, in a step (so only the first run's time is kept), and completes. */
const runner: TaskRunner = async (_task, exec) => {
  await exec.step('started', () => Date.now());
  return { kind: 'completed', result: { content: [], isError: false } };
};

/**
 * Creates tasks of one key at `createPerSecond` (round robin over the stores) for `runMs`, while a worker per store
 * runs them under `limit` per `periodMs`; then reads every task's first start from the store.
 */
export async function runRateAcrossReplicas(
  stores: readonly TaskStore[],
  options: { key: string; limit: number; periodMs: number; createPerSecond: number; runMs: number },
): Promise<RateRun> {
  const { key, limit, periodMs, createPerSecond, runMs } = options;
  const workers: Worker[] = stores.map((store) => createWorker({ store, runner, concurrency: 4 }));
  for (const w of workers) w.start();
  const ids: string[] = [];
  const began = performance.now();
  try {
    for (let n = 0; performance.now() - began < runMs; n++) {
      const due = began + (n * 1_000) / createPerSecond;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const store = stores[n % stores.length] as TaskStore;
      ids.push((await store.create(rated(key, limit, periodMs))).id);
    }
  } finally {
    await Promise.all(workers.map((w) => w.stop(5_000)));
  }
  const inspect = stores[0]?.inspect?.bind(stores[0]);
  if (inspect === undefined) throw new Error('the store cannot be inspected');
  const starts: number[] = [];
  for (const id of ids) {
    const started = (await inspect(id, Date.now()))?.steps.find((s) => s.name === 'started');
    if (started?.startedAt !== undefined) starts.push(started.startedAt);
  }
  return { starts: starts.sort((a, b) => a - b), created: ids.length };
}

/** The most starts within any window of `windowMs` (a start at its end not counted: [t, t + windowMs)). */
export function mostInWindow(starts: readonly number[], windowMs: number): number {
  let most = 0;
  let from = 0;
  for (let to = 0; to < starts.length; to++) {
    while ((starts[to] as number) - (starts[from] as number) >= windowMs) from++;
    most = Math.max(most, to - from + 1);
  }
  return most;
}
