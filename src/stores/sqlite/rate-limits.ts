// Rate limits per key on SQLite: a claim counts the first run of a rate-limited task under its key, inside the
// claim's transaction; a start over the key's rate is reserved for later and the task waits for it like a sleep.
import type { StoreContext } from './context.js';
import { countStart, rateToCount, type RateColumns } from '../core/rate.js';

/**
 * Whether the candidate may start now (inside the claim's transaction): a task whose start is not counted may; one
 * whose key's next start is due may (its start counted); one whose key is over its rate may not: its start is
 * reserved for when it is due, it waits until then (its owner told, this process's workers woken then), and it
 * leaves the line.
 */
export function admitRate(
  { q, log }: StoreContext,
  c: RateColumns & { id: string; attempt: number },
  now: number,
): boolean {
  const counted = rateToCount(c, c.attempt);
  if (counted === undefined) return true;
  const { tat, wakeAt } = countStart(q.rateTat(counted.key), now, counted.interval);
  q.setRateTat(counted.key, tat);
  if (wakeAt === undefined) {
    q.rateCounted(c.id, now);
    return true;
  }
  q.rateReserve(c.id, wakeAt, now);
  log.changed({ taskId: c.id, runnable: false, cancelRequested: false, wakeAt });
  return false;
}
