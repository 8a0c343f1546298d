// Operators' pauses on PostgreSQL: a claimed task a pause holds back is paused (the claim undone); resuming lifts the
// pause and gives its paused tasks new places in line, a bounded batch per statement. The pauses a claim weighs are
// read at most once a second per store (and again at once after this store's own pause or resume), so that claims
// cost nothing more while nothing is paused; another replica's pause holds here within that second.
import { performance } from 'node:perf_hooks';
import type { TaskAdmin } from '../../tasks/admin.js';
import { MAX_PAUSES, pauseInScope, pauseOf, type PauseTarget } from '../../tasks/pauses.js';
import { visibleTenants } from '../admin-query.js';
import {
  flowKeys,
  storedTenant,
  toAdminPause,
  toPauseTarget,
  visiblePauses,
  type StoredPause,
} from '../core/pauses.js';
import type { StoreContext } from './context.js';
import type { ClaimRow } from './rows.js';

type PauseRow = StoredPause & Record<string, unknown>;

/** How long the pauses a claim weighs are kept (ms). */
export const PAUSES_KEPT_MS = 1_000;
/** The paused tasks one statement of a resume makes runnable (more in the next). */
export const RESUME_BATCH = 500;

export interface Pauses {
  /** The claimed rows that may run as far as pauses go: those a pause holds back are paused and left out. */
  admit(rows: ClaimRow[], now: number): Promise<ClaimRow[]>;
  readonly admin: Pick<TaskAdmin, 'pause' | 'resume' | 'pauses' | 'flow'>;
}

/** The pauses in force as a claim weighs them, kept PAUSES_KEPT_MS; `forget` reads them again on the next claim. */
function pausesKept(ctx: StoreContext): { inForce(): Promise<PauseTarget[]>; forget(): void } {
  let kept: { at: number; pauses: Promise<PauseTarget[]> } | undefined;
  return {
    inForce() {
      const at = performance.now();
      if (kept === undefined || at - kept.at > PAUSES_KEPT_MS) {
        const pauses = ctx.db.query<PauseRow>(ctx.q.listPauses).then((rows) => rows.map(toPauseTarget));
        kept = { at, pauses };
        pauses.catch(() => (kept = undefined));
      }
      return kept.pauses;
    },
    forget: () => (kept = undefined),
  };
}

export function createPauses(ctx: StoreContext): Pauses {
  const { db, q, feed } = ctx;
  const kept = pausesKept(ctx);
  return {
    async admit(rows, now) {
      if (rows.length === 0) return rows;
      const pauses = await kept.inForce();
      if (pauses.length === 0) return rows;
      const held = rows.filter((r) => pauseOf(pauses, r) !== undefined);
      for (const r of held) {
        await db.query(q.pauseClaimed, [r.id, r.attempt, now, r.previous_owner, r.previous_until]);
        feed.emitLocal([{ taskId: r.id, runnable: false, cancelRequested: false }]);
      }
      return held.length === 0 ? rows : rows.filter((r) => !held.includes(r));
    },
    admin: pauseAdmin(ctx, kept.forget),
  };
}

/** The operators' pause, resume and flow view; `forget` after this store's own pause or resume. */
function pauseAdmin(ctx: StoreContext, forget: () => void): Pauses['admin'] {
  const { db, q, feed } = ctx;
  const count = async (sql: string, params: unknown[]): Promise<number> =>
    Number((await db.query<{ n: number }>(sql, params))[0]?.n ?? 0);
  const resumeBatch = async (target: PauseTarget, now: number): Promise<number> => {
    const params = [target.name, storedTenant(target), now, RESUME_BATCH];
    const rows = await db.query<{ id: string }>(q.resume[target.kind], params);
    feed.emitLocal(rows.map((r) => ({ taskId: r.id, runnable: true, cancelRequested: false })));
    return rows.length;
  };
  return {
    async pause(scope, target, now) {
      if (!pauseInScope(scope, target.tenant)) return { ok: false, reason: 'forbidden' };
      const params = [target.kind, target.name, storedTenant(target), now];
      const created = await db.tx(async (run) => {
        const [row] = await run<{ n: number }>(q.countPauses);
        if (Number(row?.n ?? 0) >= MAX_PAUSES) return undefined;
        return (await run(q.insertPause, params)).length === 1;
      });
      forget();
      return created === undefined ? { ok: false, reason: 'too_many' } : { ok: true, created };
    },

    async resume(scope, target, now) {
      if (!pauseInScope(scope, target.tenant)) return { ok: false, reason: 'not_found' };
      const lifted = await db.query(q.deletePause, [target.kind, target.name, storedTenant(target)]);
      forget();
      let resumed = 0;
      for (let n = RESUME_BATCH; n === RESUME_BATCH; resumed += n) n = await resumeBatch(target, now);
      // Tasks left paused by a resume that stopped half-way are resumed too.
      return lifted.length === 0 && resumed === 0
        ? { ok: false, reason: 'not_found' }
        : { ok: true, resumed };
    },

    async pauses(scope) {
      const rows = visiblePauses(scope, await db.query<PauseRow>(q.listPauses));
      return Promise.all(
        rows.map(async (row) =>
          toAdminPause(row, await count(q.pausedCount[row.kind], [row.name, row.tenant])),
        ),
      );
    },

    async flow(scope, now, max) {
      const tenants = visibleTenants(scope);
      const keys = await db.query<{ key: string }>(q.parkedKeys);
      return flowKeys(
        keys.map((k) => k.key),
        max,
        {
          parkedIn: (key) => count(q.parkedIn, [key, tenants === undefined ? null : [...tenants]]),
          limitOf: async (key) => (await db.query<{ n: number }>(q.headLimit, [key]))[0]?.n,
          slotsHeld: (key) => count(q.slotsHeld, [key, now]),
        },
      );
    },
  };
}
