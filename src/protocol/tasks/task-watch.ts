// Waits for changes of one task without holding anything but the request: the store's change feed wakes the
// waiter, a poll covers stores without one (and any missed change).
import type { TaskStore } from '../../tasks/store.js';

export interface TaskWatch {
  /** Resolves after a change of the task, `ms`, or the signal's abort, whichever comes first. */
  next(ms: number): Promise<void>;
  /** Wakes the watch as a change of the task would (news that reached the caller another way). */
  wake(): void;
  stop(): void;
}

export function watchTask(store: TaskStore | undefined, taskId: string, signal: AbortSignal): TaskWatch {
  let wake: (() => void) | undefined;
  let changed = false;
  const changedNow = (): void => {
    changed = true;
    wake?.();
  };
  // A resync (the feed began hearing other processes) may hide a change of this task: it counts as one.
  const unsubscribe = store?.changes?.subscribe((change) => {
    if (change.taskId === taskId) changedNow();
  }, changedNow);
  return {
    next(ms) {
      if (changed || signal.aborted) {
        changed = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          wake = undefined;
          changed = false;
          resolve();
        };
        const timer = setTimeout(done, Math.max(0, ms));
        wake = done;
        signal.addEventListener('abort', done, { once: true });
      });
    },
    wake: changedNow,
    stop: () => unsubscribe?.(),
  };
}

/** How long to sleep between looks: long when changes wake the watch, the task's poll interval otherwise. */
export function watchDelay(store: TaskStore | undefined, pollIntervalMs: unknown): number {
  if (store?.changes !== undefined) return 2_000;
  const poll = typeof pollIntervalMs === 'number' ? pollIntervalMs : 500;
  return Math.min(1_000, Math.max(100, poll));
}
