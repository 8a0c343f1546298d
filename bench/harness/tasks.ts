// Task helpers of the setups and runs: creating tasks, waiting for input, and reading a server's SQLite file.
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { DRAIN_TIMEOUT_MS, PUSH_TIMEOUT_MS } from '../config.js';
import type { DrainInfo, LoadRequest, TargetView } from '../types.js';
import { expectJsonRpcResult, pause, resultOf, send, sendTo } from './http.js';
import { getTask } from './requests.js';

/** Creates `count` tasks with `request`, `parallel` at a time, spread over the target's replicas; their ids. */
export async function createTasks(
  target: TargetView,
  request: () => LoadRequest,
  count: number,
  parallel: number,
): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const createOne = async () => {
    while (next < count) {
      const url = target.urls[next++ % target.urls.length]!;
      const res = await sendTo(url, request());
      const problem = expectJsonRpcResult(res.status, res.text);
      if (problem !== undefined) throw new Error(`creating tasks on ${target.key}: ${problem}`);
      ids.push(resultOf(res.text).taskId!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, createOne));
  return ids;
}

/** Polls tasks/get until every task is input_required (the worker ran bench_input up to its input). */
export async function waitForInput(target: TargetView, ids: string[]): Promise<void> {
  const started = performance.now();
  for (const id of ids) {
    for (;;) {
      const res = await send(target, getTask(id));
      const problem = expectJsonRpcResult(res.status, res.text);
      if (problem !== undefined) throw new Error(`tasks/get ${id}: ${problem}`);
      if (resultOf(res.text).status === 'input_required') break;
      if (performance.now() - started > PUSH_TIMEOUT_MS) {
        throw new Error(`${target.key}: task ${id} did not ask for input within ${PUSH_TIMEOUT_MS} ms`);
      }
      await pause(5);
    }
  }
}

/** Opens a server's SQLite file read-only (WAL lets it read while the server writes) for a synchronous `read`. */
export function readStore<T>(target: TargetView, read: (db: Database.Database) => T): T {
  const db = new Database(target.store!, { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/**
 * Waits until the server's worker has finished every task created so far, so a creation run's queue does not
 * spill CPU into the next row. Reads the server's SQLite file: `tasks.runnable` is 1 from creation until the
 * run's final write.
 */
export function drainWorker(target: TargetView): Promise<DrainInfo> {
  return drainWorkerPast(target, '');
}

/**
 * drainWorker, not counting the task `running`: a run that lasts the whole benchmark (its task stays runnable while
 * it runs), such as the one that holds a concurrency key's only slot.
 */
export async function drainWorkerPast(target: TargetView, running: string): Promise<DrainInfo> {
  const db = new Database(target.store!, { readonly: true, fileMustExist: true });
  try {
    const count = db.prepare('SELECT count(*) AS n FROM tasks WHERE runnable = 1 AND id <> ?');
    const runnable = () => (count.get(running) as { n: number }).n;
    const started = performance.now();
    const backlog = runnable();
    let left = backlog;
    while (left > 0) {
      if (performance.now() - started > DRAIN_TIMEOUT_MS) {
        throw new Error(`${target.key}: ${left} of ${backlog} queued tasks still unfinished after 60 s`);
      }
      await pause(20);
      left = runnable();
    }
    return { backlog, drainMs: Math.round(performance.now() - started) };
  } finally {
    db.close();
  }
}
