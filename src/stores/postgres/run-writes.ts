// What a worker's run does to its task: claim it, renew its lease, save steps and status messages, end it.
import type { ClaimScope, RenewResult, RunWrites } from '../../tasks/store.js';
import { scopeParams } from '../claim-scope.js';
import type { ClaimedTask } from '../../tasks/task.js';
import { writeAndNotify, type StoreContext } from './context.js';
import { finishRun } from './finish.js';
import { toClaimedTask, type ClaimRow } from './rows.js';
import { sealedAt, statusFor } from '../payload-sealing.js';
import { keptProgress } from '../shown-status.js';
import { startsCountedRun } from '../core/rate.js';
import { startsDebounced } from '../core/debounce.js';
import { ActiveLimitError } from '../../tasks/errors.js';
import { MAX_PARKING_ROUNDS, type Slots } from './slots.js';
import type { Pauses } from './pauses.js';

/** A ClaimScope as the claim statement's $5–$8. */
function scopeArgs(scope: ClaimScope | undefined): unknown[] {
  const p = scopeParams(scope);
  return [p.scoped, p.tools, p.versions, p.orphanedBefore];
}

/** saveStep: fenced by the run's token; under a byte quota, only a value that keeps its owner within it. */
function stepSaver({ db, q, codec }: StoreContext): RunWrites['saveStep'] {
  return async (id, token, name, value, now, options) => {
    const seal = await codec.sealerOf(id);
    const sealed = seal(JSON.stringify(value), sealedAt('task_steps.value', id, name));
    const params = [id, token, name, sealed, options?.startedAt ?? null, now];
    const limit = options?.storedBytesLimit;
    if (limit === undefined) return (await db.query(q.saveStep, params)).length === 1;
    const [row] = await db.query<{ saved: number }>(q.saveStepWithin, [...params, limit]);
    if (row === undefined) return false;
    // Not written: the value would put its owner over the limit.
    if (row.saved === 0) throw new ActiveLimitError(limit, 'stored-bytes');
    return true;
  };
}

/**
 * Claims up to `max` tasks: the claim statement, then those an operator's pause holds back are paused (pauses.ts) and
 * the limited tasks among the others take a slot of their key or are parked (slots.ts); while tasks were paused or
 * parked and fewer than `max` claimed, it claims again (a bounded number of times).
 */
async function claimAdmitted(
  { db, q, feed }: StoreContext,
  { slots, pauses }: { slots: Slots; pauses: Pauses },
  params: { workerId: string; leaseMs: number; now: number; max: number; scope: ClaimScope | undefined },
): Promise<ClaimRow[]> {
  const { workerId, leaseMs, now, max, scope } = params;
  const out: ClaimRow[] = [];
  let parked = '';
  for (let round = 0; round < MAX_PARKING_ROUNDS; round++) {
    const want = max - out.length;
    const rows = await db.query<ClaimRow>(q.claim, [workerId, now + leaseMs, now, want, ...scopeArgs(scope)]);
    const admitted = await slots.admit(await pauses.admit(rows, now), now);
    out.push(...admitted);
    if (rows.length < want || admitted.length === rows.length) return out;
    parked = rows.find((r) => !admitted.includes(r))?.id ?? parked;
  }
  // Still parking: more may wait in line, so claims go on (this process is told; others hear of the parked tasks).
  feed.emitLocal([{ taskId: parked, runnable: true, cancelRequested: false }]);
  return out;
}

export function runWrites(ctx: StoreContext, slots: Slots, pauses: Pauses): RunWrites {
  const { db, q, codec } = ctx;
  const claimed = (row: ClaimRow): ClaimedTask => {
    codec.remember(row.id, row.sealed);
    // Its owner was told it waits for a version, its rate limit (shown-status.ts) or its debounce window: no longer (the claim
    // notified other replicas).
    if (
      row.version_wait === row.attempt - 1 ||
      startsCountedRun(row, row.attempt - 1) ||
      startsDebounced(row, row.attempt - 1)
    )
      ctx.feed.emitLocal([{ taskId: row.id, runnable: false, cancelRequested: false }]);
    return toClaimedTask(row, codec.open);
  };
  return {
    async claim(workerId, leaseMs, now, scope): Promise<ClaimedTask | undefined> {
      const [row] = await claimAdmitted(ctx, { slots, pauses }, { workerId, leaseMs, now, max: 1, scope });
      return row === undefined ? undefined : claimed(row);
    },

    async claimBatch(workerId, leaseMs, now, max, scope): Promise<ClaimedTask[]> {
      const rows = await claimAdmitted(ctx, { slots, pauses }, { workerId, leaseMs, now, max, scope });
      return rows.sort((a, b) => Number(a.created_at) - Number(b.created_at)).map(claimed);
    },

    async outOfScope(scope, now) {
      return db.query<{ tool: string; version: string | null; count: number }>(q.outOfScope, [
        now,
        ...scopeArgs(scope),
      ]);
    },

    async markVersionWaits(scope, now, before, max) {
      const rows = await db.query<{ id: string }>(q.markVersionWaits, [
        now,
        ...scopeArgs(scope),
        before,
        max,
      ]);
      ctx.feed.emitLocal(rows.map((r) => ({ taskId: r.id, runnable: false, cancelRequested: false })));
      return rows.length;
    },

    async renew(id, token, leaseMs, now): Promise<RenewResult> {
      const [row] = await db.query<{ cancel_requested: boolean }>(q.renew, [id, token, now + leaseMs, now]);
      return row === undefined
        ? { held: false, cancelRequested: false }
        : { held: true, cancelRequested: row.cancel_requested };
    },

    saveStep: stepSaver(ctx),

    async saveStepFailure(id, token, name, failure, now) {
      const seal = await codec.sealerOf(id);
      const last = seal(JSON.stringify(failure), sealedAt('task_step_attempts.last_failure', id, name));
      const params = [id, token, name, failure.attempt, last, now];
      return (await db.query(q.saveStepFailure, params)).length === 1;
    },

    async setStatusMessage(id, token, message, now, progress) {
      const change = { taskId: id, runnable: false, cancelRequested: false };
      const seal = await codec.sealerOf(id);
      const params = [id, token, statusFor(seal, id, message), now, keptProgress(seal, id, progress)];
      return writeAndNotify(ctx, q.setStatusMessage, params, change);
    },

    async finish(id, token, outcome, now) {
      const ok = await finishRun(ctx, id, token, outcome, now);
      // The ending has committed: a failure to wake the key's parked tasks now is made good by the sweep (freeSlots).
      await slots.release(id, token, now, ok).catch(() => undefined);
      return ok;
    },
  };
}
