// Task creation next to 10k tasks waiting for input and 10k tasks in retry backoff (what idle tasks cost creation).
import { performance } from 'node:perf_hooks';
import { RETRYING_TASKS, WAITING_TASKS } from '../config.js';
import { fmtCount, fmtInt, log } from '../format.js';
import { createInputTask, createTask } from '../harness/requests.js';
import { createTasks, drainWorker, readStore } from '../harness/tasks.js';
import type { LoadRequest, Scenario, Target } from '../types.js';
import { creationTarget, CREATION, PEER_CALL, RAW_INSERT } from './names.js';
import { verifyTaskCreated } from './tasks-common.js';

/**
 * Creates `count` tasks with `request` (50 at a time), waits until the worker has run each as far as it goes (no
 * runnable task left) and checks that `countSql` counts all of them in the server's store, `what` they are now.
 */
async function createIdleTasks(
  target: Target,
  request: () => LoadRequest,
  count: number,
  countSql: string,
  what: string,
): Promise<undefined> {
  const started = performance.now();
  await createTasks(target, request, count, 50);
  await drainWorker(target);
  const found = readStore(target, (db) => db.prepare(countSql).pluck().get({ now: Date.now() }));
  if (found !== count) throw new Error(`${target.key}: ${String(found)} tasks ${what}, expected ${count}`);
  log(`${target.key}: ${fmtInt(count)} tasks ${what} in ${Math.round(performance.now() - started)} ms`);
  return undefined;
}

/** Setup of the creation row next to waiting tasks: WAITING_TASKS bench_input tasks, all left input_required. */
function createWaitingTasks(target: Target) {
  return createIdleTasks(
    target,
    createInputTask,
    WAITING_TASKS,
    `SELECT count(*) FROM tasks WHERE status = 'input_required'`,
    'waiting for input',
  );
}

/**
 * Setup of the creation row next to retrying tasks: RETRYING_TASKS bench_retry tasks, each with one failed attempt
 * of its step on record and left working, without lease, not runnable, until its retry time (about an hour ahead).
 */
function createRetryingTasks(target: Target) {
  return createIdleTasks(
    target,
    () => createTask('bench_retry'),
    RETRYING_TASKS,
    `SELECT count(*) FROM tasks JOIN task_step_attempts a ON a.task_id = tasks.id AND a.name = 'flaky'
       WHERE status = 'working' AND runnable = 0 AND lease_owner IS NULL AND wake_at > @now AND a.failed = 1`,
    'in retry backoff',
  );
}

export const waitingRows: Scenario[] = [
  // The creation row again, on a store where WAITING_TASKS tasks wait for input (and stay so).
  {
    name: `ours task creation, ${fmtCount(WAITING_TASKS)} tasks waiting for input`,
    server: 'ours-wait',
    baseline: RAW_INSERT,
    also: [CREATION, PEER_CALL],
    setup: createWaitingTasks,
    request: () => createTask('bench_task'),
    verify: verifyTaskCreated,
    settle: drainWorker,
  },
  // The creation row again, on a store where RETRYING_TASKS tasks wait (wake_at an hour ahead) to retry a failed step.
  {
    name: `ours task creation, ${fmtCount(RETRYING_TASKS)} tasks in retry backoff`,
    server: 'ours-retry',
    baseline: RAW_INSERT,
    also: [CREATION, PEER_CALL],
    targets: [creationTarget(CREATION)],
    setup: createRetryingTasks,
    request: () => createTask('bench_task'),
    verify: verifyTaskCreated,
    settle: drainWorker,
  },
];
