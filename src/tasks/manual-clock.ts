// A clock that moves only when a test says so: timers on it fire as `advance` passes their time.
import type { Clock } from './clock.js';

/** A Clock whose time moves only through `advance`. */
export interface ManualClock extends Clock {
  /** Moves time forward, firing every timer that falls due, in time order. */
  advance(ms: number): void;
  /** Timers not yet fired or cancelled. */
  pending(): number;
  /** When the next pending timer falls due (epoch ms), or undefined when none is pending. */
  next(): number | undefined;
}

/** A manual clock starting at `start` (epoch ms). */
export function createManualClock(start: number): ManualClock {
  let now = start;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  return {
    now: () => now,
    setTimer(fn, ms) {
      const id = seq++;
      timers.set(id, { at: now + Math.max(0, ms), fn });
      return () => void timers.delete(id);
    },
    advance(ms) {
      const target = now + ms;
      for (;;) {
        const due = [...timers.entries()]
          .filter(([, t]) => t.at <= target)
          .sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
        if (due === undefined) break;
        timers.delete(due[0]);
        now = Math.max(now, due[1].at);
        due[1].fn();
      }
      now = target;
    },
    pending: () => timers.size,
    next() {
      let at: number | undefined;
      for (const timer of timers.values()) if (at === undefined || timer.at < at) at = timer.at;
      return at;
    },
  };
}
