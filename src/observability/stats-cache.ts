// Task statistics for /metrics, read from the store at most once per interval and shared by concurrent scrapes.
import type { TaskStats } from '../tasks/store.js';

export interface StatsCache {
  /** The latest stats read successfully (undefined before the first success); never rejects. */
  get(): Promise<TaskStats | undefined>;
}

/**
 * Counting stored tasks costs the store work proportional to their number, so a burst of scrapes (several
 * Prometheus servers, a curl loop) must not turn into a burst of counts. A read starts when none is in flight
 * and the last one started `intervalMs` or more ago (or the clock went back); every caller meanwhile gets the
 * last good stats, awaiting the read in flight if there is one. A failed read keeps the last good stats.
 */
export function createStatsCache(
  read: (now: number) => Promise<TaskStats>,
  intervalMs: number,
  now: () => number,
): StatsCache {
  let lastStart = Number.NEGATIVE_INFINITY;
  let good: TaskStats | undefined;
  let inFlight: Promise<void> | undefined;

  const refresh = async (at: number): Promise<void> => {
    try {
      good = await read(at);
    } catch {
      // The store is unreachable or slow: the gauges keep their last good values until a read succeeds.
    }
  };

  return {
    async get() {
      const at = now();
      if (inFlight === undefined && (at - lastStart >= intervalMs || at < lastStart)) {
        lastStart = at;
        inFlight = refresh(at).finally(() => {
          inFlight = undefined;
        });
      }
      if (inFlight !== undefined) await inFlight;
      return good;
    },
  };
}
