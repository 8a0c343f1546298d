// Filling the stored-task and sleeping-task SQLite files before the servers start: our server writes one template
// task, bench/children/scale-tasks.ts clones it.
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import {
  BENCH_TOOLS,
  CHILD,
  DRAIN_TIMEOUT_MS,
  SCALE_FILES,
  SCALE_FILL_TIMEOUT_MS,
  SCALE_LARGE,
  SCALE_SAMPLE,
  SCALE_SMALL,
  SLEEP_COUNTS,
  SLEEP_FAR_MS,
  SLEEP_FILES,
  TSX_FLAGS,
  UNLIMITED,
  type StoreSize,
} from '../config.js';
import { fmtInt, log } from '../format.js';
import type { FilledStore, LoadRequest, ScaleFill, SleepFill, TargetView } from '../types.js';
import { expectJsonRpcResult, parseAnswer, pause, resultOf, send } from './http.js';
import { runChild, startProcess, stopChild } from './processes.js';
import { createSleepTask, createTask, getTask } from './requests.js';
import { serveStore, type RunContext } from './server-spec.js';
import { SERVERS } from './servers.js';

/**
 * Fills the two stored-task files before the servers start: our server migrates a fresh file and runs one
 * bench_task to completion on it; the filler then copies that file and clones the task's row up to
 * SCALE_SMALL and SCALE_LARGE tasks. Returns per size the task count, fill time, file size and sampled ids.
 */
export async function prepareScale(ctx: RunContext): Promise<ScaleFill> {
  const started = performance.now();
  const base = join(ctx.workDir, 'scale-base.db');
  await runTemplateTask(ctx, 'scale-base', base, createTask('bench_task'), async (target, taskId) => {
    const got = await send(target, getTask(taskId));
    return parseAnswer(got.text).result?.status === 'completed';
  });
  const fill = async (size: StoreSize, count: number) => {
    const filled = await fillStore(
      base,
      join(ctx.workDir, SCALE_FILES[size]),
      count,
      SCALE_SAMPLE,
      'completed',
    );
    log(
      `scale: ${fmtInt(count)} stored tasks filled in ${filled.ms} ms ` +
        `(${(filled.bytes / 2 ** 20).toFixed(0)} MiB)`,
    );
    return filled;
  };
  const small = await fill('small', SCALE_SMALL);
  const large = await fill('large', SCALE_LARGE);
  return { small, large, totalMs: Math.round(performance.now() - started) };
}

/**
 * Starts our server on a fresh SQLite file `base` (it migrates it), sends `request` (a tools/call creating one task),
 * polls `ready(target, taskId)` every 10 ms until the worker has taken the task where the template must be, and
 * stops the server: `base` then holds exactly that task, as the server wrote it.
 */
async function runTemplateTask(
  ctx: RunContext,
  key: string,
  base: string,
  request: LoadRequest,
  ready: (target: TargetView, taskId: string) => boolean | Promise<boolean>,
): Promise<void> {
  const server = {
    command: (c: RunContext) =>
      serveStore({ ...c, cpuProf: undefined }, key, base, ['--tools', BENCH_TOOLS, ...UNLIMITED]),
  };
  const started = await startProcess(server, key, ctx);
  const target = { ...started, urls: [started.url] };
  try {
    const res = await send(target, request);
    const problem = expectJsonRpcResult(res.status, res.text);
    if (problem !== undefined) throw new Error(`${key}: creating the template task: ${problem}`);
    const taskId = resultOf(res.text).taskId!;
    for (let waited = 0; !(await ready(target, taskId)); waited += 10) {
      if (waited > DRAIN_TIMEOUT_MS) throw new Error(`${key}: template task ${taskId} did not get ready`);
      await pause(10);
    }
  } finally {
    await stopChild(started.child);
  }
}

/** Whether the template task has begun its sleep: wake-up time set, lease released. */
function asleep(base: string, taskId: string): boolean {
  const db = new Database(base, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('SELECT wake_at, lease_owner FROM tasks WHERE id = ?').get(taskId) as
      { wake_at: number | null; lease_owner: string | null } | undefined;
    return row !== undefined && row.wake_at !== null && row.lease_owner === null;
  } finally {
    db.close();
  }
}

/**
 * Fills the sleeping-task files of the servers that run, before the servers start: our server migrates a fresh file
 * and runs one bench_sleep task into its sleep (SLEEP_FAR_MS ahead: the task is stored working, not runnable, without
 * lease, with wake_at and the memo of its `nap` sleep in task_steps); the filler then copies that file and clones the
 * task (its row and its step row) up to SLEEP_SMALL or SLEEP_LARGE sleeping tasks.
 */
export async function prepareSleepers(ctx: RunContext, servers: string[]): Promise<SleepFill | undefined> {
  const sizes = [...new Set(servers.map((key) => SERVERS[key]!.sleepers))].filter(
    (x): x is StoreSize => x !== undefined,
  );
  if (sizes.length === 0) return undefined;
  const started = performance.now();
  const base = join(ctx.workDir, 'sleep-base.db');
  const request = createSleepTask(Date.now() + SLEEP_FAR_MS);
  await runTemplateTask(ctx, 'sleep-base', base, request, (_target, taskId) => asleep(base, taskId));
  const filled: Partial<SleepFill> = {};
  for (const size of sizes) {
    const count = SLEEP_COUNTS[size];
    const target = join(ctx.workDir, SLEEP_FILES[size]);
    const { sample: _sample, ...fill } = await fillStore(base, target, count, 0, 'sleeping');
    filled[size] = fill;
    log(`sleepers: ${fmtInt(count)} sleeping tasks filled in ${fill.ms} ms`);
  }
  return { ...filled, totalMs: Math.round(performance.now() - started) };
}

/** Runs bench/children/scale-tasks.ts (at most SCALE_FILL_TIMEOUT_MS) and returns what it printed. */
async function fillStore(
  source: string,
  target: string,
  count: number,
  sample: number,
  kind: 'completed' | 'sleeping',
): Promise<FilledStore> {
  const args = [...TSX_FLAGS, CHILD.scaleTasks, source, target, String(count), String(sample), kind];
  const { code, signal, out, err } = await runChild(args, SCALE_FILL_TIMEOUT_MS);
  if (code === 0) return JSON.parse(out) as FilledStore;
  throw new Error(`filling ${fmtInt(count)} stored tasks failed (${signal ?? code}): ${err.trim()}`);
}
