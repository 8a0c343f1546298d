// Concurrency limits per key on SQLite: a claim takes a slot of the task's key or parks the task; a run's ending
// frees its slot and makes the first parked task of the key runnable; the sweep does the same for lapsed leases.
import type { TaskStore } from '../../tasks/store.js';
import { keptHolder } from '../core/slot-holders.js';
import type { StoreContext } from './context.js';

/** How many tasks one claim parks at most before it gives up for this time (each leaves the line for good). */
export const MAX_PARKED_PER_CLAIM = 1_000;

/** A claim's candidate, with the limit it was created under. */
export interface Candidate {
  id: string;
  tenant: string;
  principal: string;
  concurrency_key: string | null;
  concurrency_limit: number | null;
}

/**
 * Whether the candidate may run now (inside the claim's transaction): a task without a limit may; one whose key has
 * a free slot may (the caller then takes it, `takeSlot`); one whose key is full is parked (its owner is told, and
 * it leaves the line until a slot frees) and may not.
 */
export function admit({ q, log }: StoreContext, c: Candidate, now: number): boolean {
  if (c.concurrency_key === null || c.concurrency_limit === null) return true;
  if (q.slotsHeld(c.concurrency_key, c.id, now) < c.concurrency_limit) return true;
  q.park(c.id, c.concurrency_key, c.tenant, c.principal, now);
  log.changed({ taskId: c.id, runnable: false, cancelRequested: false });
  return false;
}

/**
 * Makes runnable as many parked tasks of `key` as it has free slots, first in its line first (inside a write
 * transaction). Slots whose run's lease lapsed count as free (and their rows go). Returns the ids.
 */
export function wakeParked({ q, log }: StoreContext, key: string, now: number): string[] {
  q.dropLapsedSlots(key, now);
  const [head] = q.parkedHeads(key, 1);
  if (head === undefined) return [];
  const free = head.concurrency_limit - q.slotsHeld(key, '', now);
  if (free <= 0) return [];
  const woken = q.parkedHeads(key, free);
  for (const t of woken) {
    q.unpark(t, now);
    log.changed({ taskId: t.id, runnable: true, cancelRequested: false });
  }
  return woken.map((t) => t.id);
}

/** A run ended (inside its transaction): its slot frees, and the first parked task of its key may run. */
export function releaseSlot(ctx: StoreContext, id: string, token: number, now: number): void {
  const key = ctx.q.releaseSlot(id, token);
  if (key !== undefined) wakeParked(ctx, key, now);
}

/**
 * Slots taken by holders other than a task's claim (TaskStore.acquireSlot, releaseSlot): counted with the slots runs
 * hold, in the same write transaction; a freed one wakes the key's parked tasks.
 */
export function holderSlots(ctx: StoreContext): Pick<TaskStore, 'acquireSlot' | 'releaseSlot'> {
  return {
    async acquireSlot(holder, now) {
      const h = keptHolder(holder, ctx.codec);
      return ctx.writes.tx(() => {
        const { q } = ctx;
        q.dropLapsedSlots(h.key, now, h.id);
        if (q.holdsSlot(h.id, h.key, now)) {
          q.renewHolder(h.id, h.until);
          return true;
        }
        if (q.slotsHeld(h.key, h.taskId ?? '', now, h.id) >= h.limit) return false;
        q.takeHolder(h);
        return true;
      });
    },
    async releaseSlot(holderId, now) {
      await ctx.writes.tx(() => {
        const key = ctx.q.freeHolder(holderId);
        if (key !== undefined) wakeParked(ctx, key, now);
      });
    },
  };
}

/**
 * The sweep of every key with parked tasks (TaskStore.freeSlots); it also deletes the rows of rate-limited keys
 * whose time is past (rate-limits.ts), which mean the same as none.
 */
export function slotSweep(ctx: StoreContext): Pick<TaskStore, 'freeSlots'> {
  return {
    async freeSlots(now) {
      return ctx.writes.tx(() => {
        ctx.q.dropPastRates(now);
        return ctx.q.parkedKeys().reduce((n, key) => n + wakeParked(ctx, key, now).length, 0);
      });
    },
  };
}
