// One timer, for the earliest wake-up known (of waits this process ended, or found in the store): however many tasks
// wait, the process holds no more than this for them. Other processes' waits are found by the poll.
import type { Clock } from '../tasks/clock.js';

export interface WakeTimer {
  /** Wakes at `at`, unless a wake-up as early is already set (or the worker stopped). */
  wakeBy(at: number): void;
  /** Drops the wake-up set, if any. */
  cancel(): void;
}

export function createWakeTimer(clock: Clock, stopped: () => boolean, onWake: () => void): WakeTimer {
  let wakeAt = Infinity;
  let cancelWake: (() => void) | undefined;
  return {
    wakeBy(at) {
      if (stopped() || at >= wakeAt) return;
      cancelWake?.();
      wakeAt = at;
      cancelWake = clock.setTimer(
        () => {
          wakeAt = Infinity;
          cancelWake = undefined;
          onWake();
        },
        Math.max(0, at - clock.now()),
      );
    },
    cancel() {
      cancelWake?.();
      cancelWake = undefined;
      wakeAt = Infinity;
    },
  };
}
