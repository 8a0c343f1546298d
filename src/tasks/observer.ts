// Hooks the worker calls as runs start and end (metrics, logs, traces); all optional.
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
  /** `written` is false when the ending write was refused (lease lost, task already ended). */
  runFinished?(run: RunInfo, outcome: RunOutcome['kind'], durationMs: number, written: boolean): void;
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
    toolError: (report) => list.forEach((o) => o.toolError?.(report)),
    error: (err, id) => list.forEach((o) => o.error?.(err, id)),
    outOfScope: (waiting) => list.forEach((o) => o.outOfScope?.(waiting)),
  };
}
