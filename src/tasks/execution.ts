// What a task run sees of the runtime (steps, status, cancellation), and the runner the protocol layer provides.
import type { ClaimedTask, Json, RunOutcome } from './task.js';

export interface ExecutionContext {
  /** Fires when the task is cancelled, its lease is lost, or the server shuts down. */
  readonly signal: AbortSignal;
  /** Runs `fn` once for the task's life; later runs get the stored result without running it. */
  step<T extends Json>(name: string, fn: () => T | Promise<T>): Promise<T>;
  /** Updates the task's statusMessage. */
  status(message: string): Promise<void>;
}

/** Runs (or replays) the handler of a claimed task and says how the run ended. */
export type TaskRunner = (task: ClaimedTask, exec: ExecutionContext) => Promise<RunOutcome>;

/** Thrown by `step` when the lease was lost: the run must stop without writing anything else. */
export class LeaseLostError extends Error {
  constructor(taskId: string) {
    super(`lease lost on task ${taskId}`);
    this.name = 'LeaseLostError';
  }
}
