// Hooks the worker calls as runs start and end and as steps are retried (metrics, logs, traces); all optional.
import type { RunOutcome, TaskFailure } from './task.js';
import type { OutOfScopeTasks } from './store.js';

export interface RunInfo {
  id: string;
  tool: string;
  takenOver: boolean;
}

/** An error a tool threw, once it is kept with its task (or, for a call without a task, once it was answered). */
export interface ToolErrorReport {
  taskId: string | undefined;
  tool: string;
  failure: TaskFailure;
}

export interface TaskObserver {
  runStarted?(run: RunInfo): void;
  /**
   * `written` is false when the ending write was refused (lease lost, task already ended) or not made (the lease was
   * lost, or the store unavailable, during the run). Also called, after `runStarted`, for a claim that ends the task
   * without running its tool (a cancel requested before it ran; a crash takeover of a tool that must not re-run).
   */
  runFinished?(run: RunInfo, outcome: RunOutcome['kind'], durationMs: number, written: boolean): void;
  /**
   * A step attempt failed and will be retried (after its backoff): called once the failure is kept, with the step's
   * name and the 1-based number of the attempt that failed.
   */
  stepRetried?(run: RunInfo, step: string, attempt: number): void;
  /** Called once per kept tool error: after the write that ended the task with it. */
  toolError?(report: ToolErrorReport): void;
  error?(err: unknown, taskId?: string): void;
  /**
   * Runnable tasks this process cannot replay (a version its code does not declare), by tool and version, read
   * at most once a minute while there are any (then once more, empty, when there are none left).
   */
  outOfScope?(waiting: readonly OutOfScopeTasks[]): void;
}

/** Calls every observer in turn. */
export function combineObservers(...observers: (TaskObserver | undefined)[]): TaskObserver {
  const list = observers.filter((o): o is TaskObserver => o !== undefined);
  return {
    runStarted: (run) => list.forEach((o) => o.runStarted?.(run)),
    runFinished: (run, outcome, ms, written) =>
      list.forEach((o) => o.runFinished?.(run, outcome, ms, written)),
    stepRetried: (run, step, attempt) => list.forEach((o) => o.stepRetried?.(run, step, attempt)),
    toolError: (report) => list.forEach((o) => o.toolError?.(report)),
    error: (err, id) => list.forEach((o) => o.error?.(err, id)),
    outOfScope: (waiting) => list.forEach((o) => o.outOfScope?.(waiting)),
  };
}
