// Per-step concurrency (StepOptions.concurrency): an attempt of a step holds a slot of its key while its body runs,
// counted in the store with the slots tasks of the key hold. A full key is waited for briefly in process, then the
// run ends and the task waits durably, trying the step again when it comes due.
import { createHash } from 'node:crypto';
import { backoffMs, jitteredMs } from '../pacing/backoff.js';
import type { Clock } from '../tasks/clock.js';
import type { StepConcurrency } from '../tasks/execution.js';
import type { SlotHolder, TaskStore } from '../tasks/store.js';
import type { ClaimedTask } from '../tasks/task.js';

/** How long a step waits in process for a slot before its run ends waiting (its worker freed). */
export const STEP_SLOT_WAIT_MS = 2_000;
/** After that, the task waits durably about this long (the upper half of it, at random) before trying again. */
export const STEP_SLOT_RECHECK_MS = 2_000;
/** The first and longest pause between two looks at a full key in process. */
const FIRST_PAUSE_MS = 25;
const LONGEST_PAUSE_MS = 500;

/** The status message of a task whose step waits for a slot of `key`. */
export const stepSlotWaitMessage = (key: string, step: string): string =>
  `Waiting for a free slot of concurrency key "${key}" to run step "${step}".`;

export interface StepSlotDeps {
  store: TaskStore;
  clock: Clock;
  random: () => number;
}

/** A slot taken (`release` frees it; it never throws), or the wait the run must end with. */
export type StepSlot =
  { kind: 'held'; release: () => Promise<void> } | { kind: 'wait'; until: number; statusMessage: string };

/** The holder a run's step takes its slot as: the run and the step (a long name by its digest, within 200). */
function holderId(task: ClaimedTask, name: string): string {
  const id = `${task.id}:${task.token}:${name}`;
  if (id.length <= 200) return id;
  return `${task.id}:${task.token}:#${createHash('sha256').update(name).digest('base64url')}`;
}

/** Resolves after `ms` of `clock`, or rejects with the signal's reason once it fires. */
function pause(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise((resolve, reject) => {
    const stop = (): void => {
      cancel();
      reject(signal.reason as Error);
    };
    const cancel = clock.setTimer(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    signal.addEventListener('abort', stop, { once: true });
  });
}

/**
 * Takes a slot of `limit.key` for step `name` of the run, looking again with growing pauses while the key is full,
 * up to the in-process wait; then answers the wait the run must end with. `onStoreError` turns a failed write into
 * what to throw (the run's handling of an unavailable store).
 */
export async function takeStepSlot(
  deps: StepSlotDeps,
  task: ClaimedTask,
  name: string,
  limit: StepConcurrency,
  signal: AbortSignal,
  onStoreError: (err: unknown) => unknown,
): Promise<StepSlot> {
  const { store, clock, random } = deps;
  const { acquireSlot, releaseSlot } = store;
  if (acquireSlot === undefined || releaseSlot === undefined)
    throw new Error(`step "${name}": this task store does not support per-step concurrency limits`);
  const holder: SlotHolder = {
    id: holderId(task, name),
    slot: { key: limit.key, limit: limit.limit },
    run: { taskId: task.id, token: task.token },
  };
  const deadline = clock.now() + STEP_SLOT_WAIT_MS;
  for (let n = 0; ; n++) {
    let took: boolean;
    try {
      took = await acquireSlot.call(store, holder, clock.now());
    } catch (err) {
      throw onStoreError(err);
    }
    if (took) {
      const release = () => releaseSlot.call(store, holder.id, clock.now()).catch(() => undefined);
      return { kind: 'held', release };
    }
    const left = deadline - clock.now();
    if (left <= 0) {
      const until = clock.now() + Math.round(jitteredMs(STEP_SLOT_RECHECK_MS, 0.5, random()));
      return { kind: 'wait', until, statusMessage: stepSlotWaitMessage(limit.key, name) };
    }
    await pause(clock, Math.min(left, backoffMs(n, FIRST_PAUSE_MS, LONGEST_PAUSE_MS, random)), signal);
  }
}
