// Sleeping tasks: how late sample tasks wake on a server whose store holds 100 or 100k other sleeping tasks, and
// how much those servers' processes have grown.
import { performance } from 'node:perf_hooks';
import {
  SLEEP_LARGE,
  SLEEP_MEMORY_MAX_RATIO,
  SLEEP_SMALL,
  WAKE_LEAD_MS,
  WAKE_TIMEOUT_MS,
  WAKES_PER_SECOND,
} from '../config.js';
import { fmtCount } from '../format.js';
import { expectJsonRpcResult, firstText, pause, resultOf, send } from '../harness/http.js';
import { probeMemory } from '../harness/memory-probe.js';
import { createSleepTask, getTask } from '../harness/requests.js';
import { readStore } from '../harness/tasks.js';
import { latencySample } from '../stats.js';
import type { FootprintSample, LatencyTargetSpec, RowState, Scenario, Target, TargetView } from '../types.js';
import { SLEEP_MEMORY_SMALL_ROW, WAKE_SMALL_ROW } from './names.js';

/**
 * The wake-up lateness rows' target: a sleeping task resumes within one poll interval of its wake time (p99 ÷ the
 * pollIntervalMs the server advertised for the sample tasks, below 1): a client polling at that interval sees it
 * working again no later than it would see any other change.
 */
const WAKE_TARGET: LatencyTargetSpec = {
  text: "p99 below one poll interval (p99 ÷ the sample tasks' advertised pollIntervalMs)",
  p99Ratio: 1,
  vs: 'interval',
};

interface SleepingTask {
  id: string;
  until: number;
  pollIntervalMs: unknown;
}

/** Runs `work` on `parallel` workers that share one queue of `count` items. */
async function inParallel(count: number, parallel: number, work: (i: number) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

/** Creates one bench_sleep task per wake time (10 at a time): their ids, wake times and advertised poll intervals. */
async function createSleepingTasks(target: TargetView, wakes: number[]): Promise<SleepingTask[]> {
  const tasks: SleepingTask[] = [];
  await inParallel(wakes.length, 10, async (i) => {
    const until = wakes[i]!;
    const res = await send(target, createSleepTask(until));
    const problem = expectJsonRpcResult(res.status, res.text);
    if (problem !== undefined) throw new Error(`${target.key}: creating a sleeping task: ${problem}`);
    const { taskId, pollIntervalMs } = resultOf(res.text);
    tasks.push({ id: taskId!, until, pollIntervalMs });
  });
  return tasks;
}

/** Polls tasks/get of one sample task until it completed: the lateness it reported (`late <ms>`). */
async function readOneLateness(target: TargetView, task: SleepingTask, giveUp: number): Promise<number> {
  for (;;) {
    const res = await send(target, getTask(task.id));
    const problem = expectJsonRpcResult(res.status, res.text);
    if (problem !== undefined) throw new Error(`${target.key}: tasks/get ${task.id}: ${problem}`);
    const got = resultOf(res.text);
    if (got.status === 'completed') {
      const ms = Number(/^late (-?\d+)$/.exec(firstText(got.result))?.[1]);
      if (!(ms >= 0)) throw new Error(`${target.key}: unexpected result ${res.text.slice(0, 300)}`);
      return ms;
    }
    if (got.status !== 'working' || performance.now() > giveUp) {
      throw new Error(`${target.key}: sample task ${task.id} still ${got.status} ${WAKE_TIMEOUT_MS} ms on`);
    }
    await pause(20);
  }
}

/** The lateness each task reported by task id, read with tasks/get (10 at a time) once it completed. */
async function readLateness(target: TargetView, tasks: SleepingTask[]): Promise<Map<string, number>> {
  const giveUp = performance.now() + WAKE_TIMEOUT_MS;
  const late = new Map<string, number>();
  await inParallel(tasks.length, 10, async (i) => {
    const task = tasks[i]!;
    late.set(task.id, await readOneLateness(target, task, giveUp));
  });
  return late;
}

/** The ids of those tasks that slept: the memo of their `nap` sleep is in the server's store (read-only). */
function sleptTasks(target: TargetView, tasks: SleepingTask[]): Set<string> {
  const ids = readStore(target, (db) =>
    db
      .prepare(
        `SELECT task_id FROM task_steps WHERE name = 'nap' AND task_id IN (SELECT value FROM json_each(?))`,
      )
      .pluck()
      .all(JSON.stringify(tasks.map((t) => t.id))),
  );
  return new Set(ids as string[]);
}

/**
 * Wake-up lateness: creates WAKES_PER_SECOND × `seconds` bench_sleep tasks (at least 10), their wake times spread
 * evenly over a window of `seconds` that opens WAKE_LEAD_MS from now; waits until the window is over and reads each
 * task's result: how many ms after its wake time its handler resumed, by the server's Date.now() (bench/tools.mjs).
 * A task whose first run began only after its wake time never slept (its handler did not stop at the sleep, and no
 * memo of it is stored): it is left out and counted as `missed`. Also returns the poll interval the server gave them.
 */
async function wakeLateness(target: TargetView, _state: RowState | undefined, seconds: number) {
  const count = Math.max(10, Math.round(WAKES_PER_SECOND * seconds));
  const opens = Date.now() + WAKE_LEAD_MS;
  const wakes = Array.from({ length: count }, (_, i) => Math.round(opens + (i * seconds * 1000) / count));
  const tasks = await createSleepingTasks(target, wakes);
  await pause(Math.max(0, wakes[count - 1]! - Date.now()));
  const late = await readLateness(target, tasks);
  const slept = sleptTasks(target, tasks);
  const latencies = tasks.filter((t) => slept.has(t.id)).map((t) => late.get(t.id)!);
  if (latencies.length === 0)
    throw new Error(`${target.key}: none of ${count} sample tasks began its sleep in time`);
  const intervals = [...new Set(tasks.map((t) => t.pollIntervalMs))];
  if (intervals.length !== 1 || typeof intervals[0] !== 'number') {
    throw new Error(`${target.key}: the sample tasks came with the poll intervals ${intervals.join(', ')}`);
  }
  return latencySample(latencies, seconds, { intervalMs: intervals[0], missed: count - latencies.length });
}

/**
 * The sleeping-task memory rows: what the server has added to its process since it started, read by the memory
 * probe after a full GC (its reading now minus its reading when it was loaded, before the server's own modules):
 * resident set, and V8 heap used + external. Also counts the sleeping tasks in the server's store.
 */
async function serverFootprint(target: Target): Promise<FootprintSample> {
  const started = performance.now();
  const usage = await probeMemory(target);
  const { atStart } = usage;
  if (atStart === undefined) throw new Error(`${target.key}: the memory probe sent no start-up reading`);
  const sleeping = readStore(target, (db) =>
    db.prepare(`SELECT count(*) FROM tasks WHERE status = 'working' AND wake_at IS NOT NULL`).pluck().get(),
  ) as number;
  return {
    rssGrowth: usage.rss - atStart.rss,
    heapGrowth: usage.heapUsed + usage.external - atStart.heapUsed - atStart.external,
    rss: usage.rss,
    sleeping,
    ok: 1,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    seconds: Math.round(performance.now() - started) / 1000,
  };
}

// Sleeping tasks: how late sample tasks wake (from their wake time to their handler resuming) on a server whose
// store holds SLEEP_SMALL and SLEEP_LARGE other sleeping tasks; then, in the same round, those servers' memory.
export const sleepingRows: Scenario[] = [
  {
    name: WAKE_SMALL_ROW,
    server: 'ours-sleep-small',
    baseline: null,
    kind: 'latency',
    target: WAKE_TARGET,
    run: wakeLateness,
  },
  {
    name: `ours wake-up lateness, ${fmtCount(SLEEP_LARGE)} sleeping tasks`,
    server: 'ours-sleep-large',
    baseline: WAKE_SMALL_ROW,
    kind: 'latency',
    target: WAKE_TARGET,
    run: wakeLateness,
  },
  {
    name: SLEEP_MEMORY_SMALL_ROW,
    server: 'ours-sleep-small',
    baseline: null,
    kind: 'footprint',
    run: serverFootprint,
  },
  {
    name: `ours server memory, ${fmtCount(SLEEP_LARGE)} sleeping tasks`,
    server: 'ours-sleep-large',
    baseline: SLEEP_MEMORY_SMALL_ROW,
    kind: 'footprint',
    target: {
      text: `RSS growth at most ${SLEEP_MEMORY_MAX_RATIO} × with ${fmtCount(SLEEP_SMALL)} sleeping tasks`,
      maxRatio: SLEEP_MEMORY_MAX_RATIO,
    },
    run: serverFootprint,
  },
];
