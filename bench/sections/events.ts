// Task creation next to 10k tasks waiting for events from outside (ctx.waitForEvent): what such waits cost creation,
// and that a waiting task holds no worker (no lease, no run: the store says so before and after every run).
import { performance } from 'node:perf_hooks';
import { EVENT_TASKS, EVENTS_MIN_RATIO } from '../config.js';
import { fmtCount, fmtInt, log } from '../format.js';
import { createTask } from '../harness/requests.js';
import { createTasks, drainWorker, readStore } from '../harness/tasks.js';
import type { DrainInfo, Scenario, Target, TargetView } from '../types.js';
import { CREATION, PEER_CALL, RAW_INSERT } from './names.js';
import { verifyTaskCreated } from './tasks-common.js';

/**
 * The bench_event tasks whose wait is registered and whose run ended waiting: working, no lease (no worker holds
 * them), not runnable, woken only by their event or their time out hours ahead.
 */
const WAITING = `SELECT count(*) FROM tasks t JOIN outside_events e ON e.task_id = t.id AND e.name = 'go'
  WHERE t.tool = 'bench_event' AND t.status = 'working' AND t.lease_owner IS NULL AND t.runnable = 0
    AND t.wake_at > @now AND e.state = 'waiting'`;
/** bench_event tasks a run holds (a lease): none may be. */
const HELD = `SELECT count(*) FROM tasks WHERE tool = 'bench_event' AND lease_owner IS NOT NULL`;

/** Throws unless all EVENT_TASKS tasks wait for their event and none is held by a run. */
function checkWaiting(target: TargetView, when: string): void {
  const { waiting, held } = readStore(target, (db) => ({
    waiting: db.prepare(WAITING).pluck().get({ now: Date.now() }) as number,
    held: db.prepare(HELD).pluck().get() as number,
  }));
  if (waiting !== EVENT_TASKS || held !== 0)
    throw new Error(
      `${target.key}: ${when}, ${waiting} tasks wait for their event (expected ${EVENT_TASKS}), ${held} held by a run`,
    );
}

/** Setup: EVENT_TASKS bench_event tasks (50 at a time), each run once until it waits for its event. */
async function createEventWaits(target: Target): Promise<undefined> {
  const started = performance.now();
  await createTasks(target, () => createTask('bench_event'), EVENT_TASKS, 50);
  await drainWorker(target);
  checkWaiting(target, 'after setup');
  log(
    `${target.key}: ${fmtInt(EVENT_TASKS)} tasks waiting for an event, none held by a run, in ` +
      `${Math.round(performance.now() - started)} ms`,
  );
  return undefined;
}

/** Waits for the worker, then checks that the waiting tasks stayed waiting and unheld through the run. */
async function drainEvents(target: Target): Promise<DrainInfo> {
  const drained = await drainWorker(target);
  checkWaiting(target, 'after a run');
  return drained;
}

/** The creation row again, on a store where EVENT_TASKS tasks wait for events (and stay so). */
export const eventsRow: Scenario = {
  name: `ours task creation, ${fmtCount(EVENT_TASKS)} tasks waiting for events`,
  server: 'ours-events',
  baseline: RAW_INSERT,
  also: [CREATION, PEER_CALL],
  targets: [{ vs: CREATION, min: EVENTS_MIN_RATIO }],
  setup: createEventWaits,
  request: () => createTask('bench_task'),
  verify: verifyTaskCreated,
  settle: drainEvents,
};
