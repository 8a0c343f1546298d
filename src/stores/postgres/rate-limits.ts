// Rate limits per key on PostgreSQL: the first runs among claimed rows are counted under their keys, in one
// transaction holding the keys' advisory locks (so replicas count one at a time); a start over its key's rate is
// reserved for later, the claim undone and the task left waiting for it like a sleep.
import type { TaskChange } from '../../tasks/store.js';
import { countStart, rateToCount } from '../core/rate.js';
import type { StoreContext } from './context.js';
import type { ClaimRow } from './rows.js';

/** The claimed rows that may start now: those whose start was reserved for later are left out (and announced). */
export async function admitRates(
  { db, q, feed }: StoreContext,
  rows: ClaimRow[],
  now: number,
): Promise<ClaimRow[]> {
  const counting = rows.flatMap((r) => {
    const counted = rateToCount(r, r.attempt - 1);
    return counted === undefined ? [] : [{ r, ...counted }];
  });
  if (counting.length === 0) return rows;
  const waits: TaskChange[] = [];
  await db.tx(async (run) => {
    // Keys locked in one order: two claims never wait on each other's keys.
    for (const key of [...new Set(counting.map((c) => c.key))].sort()) await run(q.lockRateKey, [key]);
    for (const { r, key, interval } of counting) {
      const [row] = await run<{ tat: number }>(q.rateTat, [key]);
      const { tat, wakeAt } = countStart(row === undefined ? undefined : Number(row.tat), now, interval);
      await run(q.setRateTat, [key, tat]);
      if (wakeAt === undefined) {
        await run(q.rateCounted, [r.id, r.attempt, now]);
        continue;
      }
      await run(q.rateReserve, [r.id, r.attempt, wakeAt, now, r.previous_owner, r.previous_until]);
      waits.push({ taskId: r.id, runnable: false, cancelRequested: false, wakeAt });
    }
  });
  feed.emitLocal(waits);
  const waiting = new Set(waits.map((c) => c.taskId));
  return rows.filter((r) => !waiting.has(r.id));
}
