// Operators' pauses on SQLite: a claim that finds a task a pause holds back takes it out of the line; resuming lifts
// the pause and gives its paused tasks new places in line, a bounded batch per write transaction.
import type { TaskAdmin } from '../../tasks/admin.js';
import { MAX_PAUSES, pauseInScope, pauseOf, type PauseTarget } from '../../tasks/pauses.js';
import { flowKeys, storedTenant, toAdminPause, toPauseTarget, visiblePauses } from '../core/pauses.js';
import { visibleTenants } from '../admin-query.js';
import type { StoreContext } from './context.js';
import { guarded } from './guarded.js';
import type { ClaimCandidate } from './sql/claims.js';

/** The paused tasks one write transaction of a resume makes runnable (more in the next). */
export const RESUME_BATCH = 500;

/** The pauses in force, as a claim weighs them: none read past the count when there are none. */
export function pausesInForce({ q }: StoreContext): PauseTarget[] {
  return q.pauseCount() === 0 ? [] : q.pausesInForce().map(toPauseTarget);
}

/**
 * Whether the candidate may run as far as pauses go (inside the claim's transaction): one a pause holds back is
 * taken out of the line (its owner is told) and may not.
 */
export function admitUnpaused(
  { q, log }: StoreContext,
  pauses: readonly PauseTarget[],
  c: ClaimCandidate,
  now: number,
): boolean {
  if (pauses.length === 0 || pauseOf(pauses, c) === undefined) return true;
  q.pauseTask(c.id, now);
  log.changed({ taskId: c.id, runnable: false, cancelRequested: false });
  return false;
}

/** The operators' pause, resume and flow view (TaskAdmin.pause, resume, pauses, flow). */
export function sqlitePauses(ctx: StoreContext): Pick<TaskAdmin, 'pause' | 'resume' | 'pauses' | 'flow'> {
  const { q, log, writes } = ctx;
  /** One batch of the tasks `target` holds back made runnable; how many. */
  const resumeBatch = (target: PauseTarget, now: number): number => {
    const woken = q.pausedHeads(target.kind, target.name, storedTenant(target), RESUME_BATCH);
    for (const t of woken) {
      q.resumeTask(t, now);
      log.changed({ taskId: t.id, runnable: true, cancelRequested: false });
    }
    return woken.length;
  };
  return {
    async pause(scope, target, now) {
      if (!pauseInScope(scope, target.tenant)) return { ok: false, reason: 'forbidden' };
      return writes.tx(() => {
        if (q.pauseCount() >= MAX_PAUSES) return { ok: false, reason: 'too_many' } as const;
        return {
          ok: true,
          created: q.insertPause(target.kind, target.name, storedTenant(target), now),
        } as const;
      });
    },

    async resume(scope, target, now) {
      if (!pauseInScope(scope, target.tenant)) return { ok: false, reason: 'not_found' };
      const first = await writes.tx(() => ({
        lifted: q.deletePause(target.kind, target.name, storedTenant(target)),
        n: resumeBatch(target, now),
      }));
      // Tasks left paused by a resume that stopped half-way are resumed too.
      if (!first.lifted && first.n === 0) return { ok: false, reason: 'not_found' };
      let resumed = first.n;
      for (let n = first.n; n === RESUME_BATCH; resumed += n)
        n = await writes.tx(() => resumeBatch(target, now));
      return { ok: true, resumed };
    },

    async pauses(scope) {
      return guarded(() =>
        visiblePauses(scope, q.pausesInForce()).map((row) =>
          toAdminPause(row, q.pausedCount(row.kind, row.name, row.tenant)),
        ),
      );
    },

    async flow(scope, now, max) {
      const tenants = visibleTenants(scope);
      return guarded(() =>
        flowKeys(q.parkedKeys(), max, {
          parkedIn: (key) => q.parkedIn(key, tenants),
          limitOf: (key) => q.parkedHeads(key, 1)[0]?.concurrency_limit,
          slotsHeld: (key) => q.slotsHeld(key, '', now),
        }),
      );
    },
  };
}
