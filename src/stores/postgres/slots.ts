// Concurrency limits per key on PostgreSQL: a claimed task takes a slot of its key or is parked (the claim undone);
// a run's ending frees its slot and makes the first parked tasks of the key runnable; the sweep does the same for
// lapsed leases. Each step is one transaction holding the key's advisory lock, so replicas count one at a time.
import type { TaskStore } from '../../tasks/store.js';
import { keptHolder } from '../core/slot-holders.js';
import type { StoreContext } from './context.js';
import type { Run } from './db.js';
import type { ClaimRow } from './rows.js';
import { admitRates } from './rate-limits.js';

/** A claim undone and retried at most this many times per call (each parks a task, which leaves the line). */
export const MAX_PARKING_ROUNDS = 64;
/**
 * The runs remembered as holding a slot, at most (a run whose lease was lost never ends here; past this, the oldest
 * is forgotten, and the sweep wakes its key's parked tasks instead of its ending).
 */
const MAX_HOLDING = 10_000;

export interface Slots {
  /**
   * The claimed rows that may run: first runs over the rate of their key wait for the start reserved for them
   * (rate-limits.ts), and limited ones take a slot of their key or are parked; both are left out.
   */
  admit(rows: ClaimRow[], now: number): Promise<ClaimRow[]>;
  /**
   * A run of this instance ended (`ended`: its ending was written; otherwise its lease was lost, and the slot row, if
   * still its own, is no longer counted): the slot it held frees, and parked tasks of its key may run.
   */
  release(id: string, token: number, now: number, ended: boolean): Promise<void>;
  readonly freeSlots: NonNullable<TaskStore['freeSlots']>;
  readonly acquireSlot: NonNullable<TaskStore['acquireSlot']>;
  readonly releaseSlot: NonNullable<TaskStore['releaseSlot']>;
}

const limitOf = (r: ClaimRow): { key: string; limit: number } | undefined =>
  typeof r.concurrency_key === 'string' && typeof r.concurrency_limit === 'number'
    ? { key: r.concurrency_key, limit: r.concurrency_limit }
    : undefined;

export function createSlots(ctx: StoreContext): Slots {
  const { db, q, feed } = ctx;
  // The runs of this instance holding a slot: their ending frees it (a run that never ends lets its lease lapse).
  const holding = new Map<string, { key: string; token: number }>();
  const wake = async (run: Run, key: string, now: number): Promise<string[]> => {
    await run(q.lockKey, [key]);
    const rows = await run<{ id: string }>(q.wakeParked, [key, now]);
    return rows.map((r) => r.id);
  };
  const remember = (id: string, held: { key: string; token: number }): void => {
    holding.delete(id);
    holding.set(id, held);
    for (const oldest of holding.keys()) {
      if (holding.size <= MAX_HOLDING) break;
      holding.delete(oldest);
    }
  };
  const announce = (ids: readonly string[], runnable: boolean): void =>
    feed.emitLocal(ids.map((taskId) => ({ taskId, runnable, cancelRequested: false })));

  return {
    async admit(claimed, now) {
      // The rate first: a task whose start is reserved for later takes no slot (rate-limits.ts).
      const rows = await admitRates(ctx, claimed, now);
      const limited = rows.filter((r) => limitOf(r) !== undefined);
      if (limited.length === 0) return rows;
      const refused = new Set<string>();
      await db.tx(async (run) => {
        // Keys locked in one order: two claims never wait on each other's keys.
        for (const key of [...new Set(limited.map((r) => r.concurrency_key as string))].sort())
          await run(q.lockKey, [key]);
        for (const r of limited) {
          const { key, limit } = limitOf(r) as { key: string; limit: number };
          const params = [r.id, r.attempt, key, limit, now, r.previous_owner, r.previous_until];
          const [res] = await run<{ took: number }>(q.takeOrPark, params);
          if (res?.took !== 1) refused.add(r.id);
          else remember(r.id, { key, token: r.attempt });
        }
      });
      announce([...refused], false);
      return rows.filter((r) => !refused.has(r.id));
    },

    async release(id, token, now, ended) {
      const held = holding.get(id);
      if (held === undefined || held.token !== token) return;
      holding.delete(id);
      if (!ended) return;
      const woken = await db.tx(async (run) => {
        await run(q.lockKey, [held.key]);
        await run(q.releaseSlot, [id, token]);
        return wake(run, held.key, now);
      });
      announce(woken, true);
    },

    ...holderSlots(ctx, wake, announce),

    async freeSlots(now) {
      await db.query(q.dropPastRates, [now]);
      const keys = await db.query<{ key: string }>(q.parkedKeys);
      let n = 0;
      for (const { key } of keys) {
        const woken = await db.tx((run) => wake(run, key, now));
        announce(woken, true);
        n += woken.length;
      }
      return n;
    },
  };
}

/** Slots of holders other than a task's claim: taken under the key's lock; a freed one wakes the key's parked tasks. */
function holderSlots(
  { db, q, codec }: StoreContext,
  wake: (run: Run, key: string, now: number) => Promise<string[]>,
  announce: (ids: readonly string[], runnable: boolean) => void,
): Pick<Slots, 'acquireSlot' | 'releaseSlot'> {
  return {
    async acquireSlot(holder, now) {
      const h = keptHolder(holder, codec);
      const params = [h.id, h.key, h.limit, h.taskId, h.token, h.until, now];
      return db.tx(async (run) => {
        await run(q.lockKey, [h.key]);
        const [res] = await run<{ took: number }>(q.acquireHolder, params);
        return res?.took === 1;
      });
    },

    async releaseSlot(holderId, now) {
      const [freed] = await db.query<{ key: string }>(q.freeHolder, [holderId]);
      if (freed === undefined) return;
      // Another transaction, under the key's lock, so that counting and waking stay one step.
      const woken = await db.tx((run) => wake(run, freed.key, now));
      announce(woken, true);
    },
  };
}
