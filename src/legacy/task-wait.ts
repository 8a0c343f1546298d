// Waits for a change of one task without holding anything but this request: the store's change feed wakes the
// waiter, a slow poll covers stores without one (and any missed change).
import type { LegacyCall } from './call.js';

export interface TaskWaiter {
  /** Resolves after a change of the task, `ms`, or the request's end, whichever comes first. */
  next(ms: number): Promise<void>;
  stop(): void;
}

export function waitForTask(call: LegacyCall, taskId: string): TaskWaiter {
  let wake: (() => void) | undefined;
  let changed = false;
  const unsubscribe = call.ctx.store?.changes?.subscribe((change) => {
    if (change.taskId !== taskId) return;
    changed = true;
    wake?.();
  });
  return {
    next(ms) {
      if (changed || call.signal.aborted) {
        changed = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          call.signal.removeEventListener('abort', done);
          wake = undefined;
          changed = false;
          resolve();
        };
        const timer = setTimeout(done, Math.max(0, ms));
        wake = done;
        call.signal.addEventListener('abort', done, { once: true });
      });
    },
    stop: () => unsubscribe?.(),
  };
}

/** How long to sleep between looks: long when changes wake us, the task's poll interval otherwise. */
export function pollDelay(call: LegacyCall, pollIntervalMs: unknown): number {
  if (call.ctx.store?.changes !== undefined) return 2_000;
  const poll = typeof pollIntervalMs === 'number' ? pollIntervalMs : 500;
  return Math.min(1_000, Math.max(100, poll));
}
