// What every record of a run checks first (the lease, its history, the store, a wait it must end with), its fenced
// writes, and how it ends waiting: shared by steps, child tasks and event waits.
import { LeaseLostError, WaitPending } from '../tasks/execution.js';
import type { WaitKind } from '../tasks/observer.js';
import type { ClaimedTask } from '../tasks/task.js';
import type { RunState } from './steps.js';

/** Throws when nothing more may be written: the lease is gone, the run left its history, or the store is away. */
export function guardWrite(task: ClaimedTask, run: RunState): void {
  // A run that knows it lost its lease writes nothing: another worker owns the task now.
  if (run.leaseLost()) throw new LeaseLostError(task.id);
  const diverged = run.divergence();
  if (diverged !== undefined) throw diverged;
  const storeError = run.storeError();
  if (storeError !== undefined) throw storeError;
}

/** Throws when no new step may start: the lease is gone, the store is away, or the run must end waiting. */
export function guard(task: ClaimedTask, run: RunState): void {
  guardWrite(task, run);
  // The run is over once it must wait, even if the handler caught the WaitPending: nothing more starts.
  const pending = run.pendingWait();
  if (pending !== undefined) throw new WaitPending(pending.until, pending.statusMessage);
}

/** A fenced write of the run; a refused one means the lease is gone, a failed one may end the run. */
export async function writeOrStop(
  task: ClaimedTask,
  run: RunState,
  save: () => Promise<boolean>,
): Promise<void> {
  let saved: boolean;
  try {
    saved = await save();
  } catch (err) {
    throw run.onWriteError(err);
  }
  if (!saved) {
    run.onLeaseLost();
    throw new LeaseLostError(task.id);
  }
}

/** Ends the run waiting until `until` (kept even if the handler catches the WaitPending). */
export function wait(
  run: RunState,
  until: number,
  statusMessage: string,
  kind: WaitKind,
  name: string,
): never {
  run.requestWait(until, statusMessage, kind, name);
  throw new WaitPending(until, statusMessage);
}
