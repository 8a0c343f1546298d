// Task creation next to 10k tasks queued behind a saturated concurrency key (what a full key's backlog costs claims).
import { performance } from 'node:perf_hooks';
import { PUSH_TIMEOUT_MS, SATURATED_MIN_RATIO, SATURATED_TASKS } from '../config.js';
import { fmtCount, fmtInt, log } from '../format.js';
import { expectJsonRpcResult, pause, resultOf, send } from '../harness/http.js';
import { createTask } from '../harness/requests.js';
import { createTasks, drainWorkerPast, readStore } from '../harness/tasks.js';
import { SATURATED_KEY } from '../tools.mjs';
import type { DrainInfo, RowState, Scenario, Target, TargetView } from '../types.js';
import { CREATION, PEER_CALL, RAW_INSERT } from './names.js';
import { verifyTaskCreated } from './tasks-common.js';

/** Whether the run of task @id holds a slot of @key at @now (the store's own rule: its token's lease is live). */
const HOLDS_SLOT = `SELECT count(*) FROM concurrency_slots c JOIN tasks t ON t.id = c.task_id
  WHERE c.key = @key AND c.task_id = @id AND t.attempt = c.token AND t.lease_owner IS NOT NULL
    AND t.lease_until >= @now AND t.status = 'working'`;
/** The bench_queued tasks parked for a slot of @key: working, out of the line, not claimable. */
const PARKED = `SELECT count(*) FROM tasks
  WHERE tool = 'bench_queued' AND concurrency_key = @key AND status = 'working' AND parked_at IS NOT NULL
    AND runnable = 0 AND lease_owner IS NULL`;

/** What the store says of the saturated key: whether `holder` holds its slot, and how many tasks are parked for it. */
function saturation(target: TargetView, holder: string) {
  return readStore(target, (db) => {
    const at = { key: SATURATED_KEY, id: holder, now: Date.now() };
    return {
      held: db.prepare(HOLDS_SLOT).pluck().get(at) === 1,
      parked: db.prepare(PARKED).pluck().get(at) as number,
    };
  });
}

/** Throws unless `holder` holds the key's slot and exactly SATURATED_TASKS tasks are parked behind it. */
function checkSaturated(target: TargetView, holder: string, when: string): void {
  const { held, parked } = saturation(target, holder);
  if (!held)
    throw new Error(`${target.key}: ${when}, bench_hold ${holder} no longer holds key "${SATURATED_KEY}"`);
  if (parked !== SATURATED_TASKS) {
    throw new Error(
      `${target.key}: ${when}, ${parked} tasks parked for the key, expected ${SATURATED_TASKS}`,
    );
  }
}

/** Creates the bench_hold task and waits until its run holds the key's only slot; its id. */
async function holdKey(target: Target): Promise<string> {
  const res = await send(target, createTask('bench_hold'));
  const problem = expectJsonRpcResult(res.status, res.text);
  if (problem !== undefined) throw new Error(`creating the task that holds the key: ${problem}`);
  const holder = resultOf(res.text).taskId!;
  const started = performance.now();
  while (!saturation(target, holder).held) {
    if (performance.now() - started > PUSH_TIMEOUT_MS) {
      throw new Error(
        `${target.key}: bench_hold ${holder} took no slot of "${SATURATED_KEY}" within ${PUSH_TIMEOUT_MS} ms`,
      );
    }
    await pause(20);
  }
  return holder;
}

/**
 * Setup of the creation row next to a saturated key: one bench_hold run takes the key's only slot and keeps it;
 * then SATURATED_TASKS bench_queued tasks (50 at a time), each of which the worker claims once and parks. Checks in
 * the store that all of them are parked and that the slot is still held; the state's `ids` is the holder's id.
 */
async function saturateKey(target: Target): Promise<RowState> {
  const started = performance.now();
  const holder = await holdKey(target);
  await createTasks(target, () => createTask('bench_queued'), SATURATED_TASKS, 50);
  await drainWorkerPast(target, holder);
  checkSaturated(target, holder, 'after setup');
  log(
    `${target.key}: ${fmtInt(SATURATED_TASKS)} tasks parked behind key "${SATURATED_KEY}" in ` +
      `${Math.round(performance.now() - started)} ms`,
  );
  return { ids: [holder] };
}

/** Waits for the worker (the holder's run aside), then checks that the key stayed saturated through the run. */
async function drainSaturated(target: Target, state: RowState | undefined): Promise<DrainInfo> {
  const holder = state!.ids[0]!;
  const drained = await drainWorkerPast(target, holder);
  checkSaturated(target, holder, 'after a run');
  return drained;
}

/** The creation row again, on a store where SATURATED_TASKS tasks wait for the slot of a key that stays full. */
export const saturatedRow: Scenario = {
  name: `ours task creation, ${fmtCount(SATURATED_TASKS)} tasks queued behind a saturated key`,
  server: 'ours-saturated',
  baseline: RAW_INSERT,
  also: [CREATION, PEER_CALL],
  targets: [{ vs: CREATION, min: SATURATED_MIN_RATIO }],
  setup: saturateKey,
  request: () => createTask('bench_task'),
  verify: verifyTaskCreated,
  settle: drainSaturated,
};
