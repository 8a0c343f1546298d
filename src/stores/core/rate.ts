// Rate limits in the stores (NewTask.rateLimit), one rule for both dialects: which claimed task's start its key
// counts, and what the count does to the key's row (GCRA, tasks/rate-limit.ts).
import { rateInterval, reserveStart } from '../../tasks/rate-limit.js';

/** The columns of a task row the rule reads (SQLite: numbers; PostgreSQL: bigints as strings). */
export interface RateColumns {
  rate_key?: string | null;
  rate_limit?: number | null;
  rate_period_ms?: number | string | null;
  rate_reserved_at?: number | string | null;
}

/**
 * The key and interval a claim counts the task's start under, or undefined when it counts none: the task has no
 * rate limit, or this is not its first run (`runsBefore`: runs claimed before this one, a resume or a takeover), or
 * its start was counted already (a start reserved and come due, or one counted before the task was parked for a
 * concurrency slot).
 */
export function rateToCount(
  row: RateColumns,
  runsBefore: number,
): { key: string; interval: number } | undefined {
  const { rate_key: key, rate_limit: limit, rate_period_ms: period } = row;
  if (key == null || limit == null || period == null) return undefined;
  if (runsBefore > 0 || row.rate_reserved_at != null) return undefined;
  return { key, interval: rateInterval({ limit, periodMs: Number(period) }) };
}

/**
 * Whether a claim starts a first run whose start an earlier claim counted (a reserved start come due, or one counted
 * before the task was parked for a concurrency slot), read from the row as it was before this claim: its owner was
 * shown it waiting, so subscribers are told it no longer does.
 */
export const startsCountedRun = (row: RateColumns, runsBefore: number): boolean =>
  runsBefore === 0 && row.rate_key != null && row.rate_reserved_at != null;

/**
 * A start counted at `now` under a key whose row holds `tat` (undefined: no row): the key's new `tat`, and, when the
 * start is reserved for later, the whole ms the task waits until (it then starts without another count).
 */
export function countStart(
  tat: number | undefined,
  now: number,
  interval: number,
): { tat: number; wakeAt: number | undefined } {
  const next = reserveStart(tat, now, interval);
  return { tat: next.tat, wakeAt: next.startAt > now ? Math.ceil(next.startAt) : undefined };
}
