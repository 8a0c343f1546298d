// What every record of a run checks first (the lease, its history, the store, a wait it must end with), its fenced
// writes, and how it ends waiting: shared by steps, child tasks and event waits.
import type { StoreUnavailableError } from '../tasks/errors.js';
import { LeaseLostError, WaitPending, type NonDeterminismError } from '../tasks/execution.js';
import type { StepEnd, StepInfo, WaitEnd, WaitInfo, WaitKind } from '../tasks/observer.js';
import type { ClaimedTask } from '../tasks/task.js';

/** The observer's hooks of steps and waits (TaskObserver), bound to the run; absent when no observer has them. */
export interface RunHooks {
  stepStarted?(step: StepInfo): void;
  stepEnded?(step: StepInfo, outcome: StepEnd, err?: unknown): void;
  waitStarted?(wait: WaitInfo): void;
  waitEnded?(wait: WaitInfo, outcome: WaitEnd): void;
}

/** How the run is doing, as the steps need to know it. */
export interface RunState {
  readonly signal: AbortSignal;
  /** Told of the run's step attempts and of the waits it keeps within itself (ctx.waitForInput). */
  readonly hooks?: RunHooks;
  /** The run learnt that its lease is gone: no new step may start. */
  leaseLost(): boolean;
  /** A write of this run failed for want of the store (then thrown by every later step). */
  storeError(): StoreUnavailableError | undefined;
  /** A write was refused: the lease is gone. */
  onLeaseLost(): void;
  /** A write failed: returns the error to throw (and ends the run if the store is unavailable). */
  onWriteError(err: unknown): unknown;
  /**
   * The run must end waiting until `until` (kept even if the handler swallows the WaitPending); `kind` and `name`
   * say what for (a wait the observer is told of, WaitInfo).
   */
  requestWait(until: number, statusMessage: string, kind?: WaitKind, name?: string): void;
  /** The wait this run must end with, once one was requested. */
  pendingWait(): { until: number; statusMessage: string } | undefined;
  /** The run left its recorded history: it must end failed with this error (kept even if the handler catches it). */
  diverge(err: NonDeterminismError): void;
  divergence(): NonDeterminismError | undefined;
}

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
