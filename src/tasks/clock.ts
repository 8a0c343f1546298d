// The time source of task runs: the current time and timers on the same clock, so tests can skip time.

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Calls `fn` once `ms` of this clock have passed; returns a function that cancels it. */
  setTimer(fn: () => void, ms: number): () => void;
}

/** Wall-clock time and real timers (unref'd: a pending wait never keeps the process alive). */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const timer = setTimeout(fn, Math.max(0, ms));
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/** The system clock's timers with another source of the current time (an injected `now`). */
export const clockWithNow = (now: () => number): Clock => ({ now, setTimer: systemClock.setTimer });
