// What a worker's run does to its task: claim it, renew its lease, save steps and status messages, end it. Every
// write after the claim is conditional on the run's token; run endings are group-committed.
import type { RenewResult, RunWrites } from '../../tasks/store.js';
import type { ClaimedTask, RunOutcome } from '../../tasks/task.js';
import type { StoreContext } from './context.js';
import type { Lane } from './group-commit.js';
import { toClaimedTask } from '../core/rows.js';
import { WOKEN_BATCH, type ClaimCandidate } from './sql/claims.js';
import { admit, MAX_PARKED_PER_CLAIM, releaseSlot } from './slots.js';
import { admitRate } from './rate-limits.js';
import { admitUnpaused, pausesInForce } from './pauses.js';
import type { PauseTarget } from '../../tasks/pauses.js';
import { scopeParams, type ScopeParams } from '../claim-scope.js';
import { overStoredBytes, storedBytes } from '../stored-bytes.js';
import { startsCountedRun } from '../core/rate.js';
import { startsDebounced } from '../core/debounce.js';
import { childEnded } from './children.js';

export interface Ending {
  id: string;
  token: number;
  outcome: RunOutcome;
  now: number;
}

/** Run endings, committed together; they fail together too (an ending's rows are the task's own). */
export function endingLane(ctx: StoreContext): Lane<Ending, boolean> {
  const { q, log } = ctx;
  return {
    rowByRow: false,
    write: (endings) =>
      endings.map(({ id, token, outcome, now }) => {
        const ended = q.finish(id, token, outcome, now);
        if (ended === undefined) return { value: false };
        const runnable = outcome.kind === 'released' || ended.due;
        log.changed({ taskId: id, runnable, cancelRequested: false });
        // Only a task with a concurrency key took a slot when claimed (claimOne), only a child has a parent to wake.
        if (ended.keyed) releaseSlot(ctx, id, token, now);
        // A wait or an ask ends the task cancelled when a cancel was requested during the run: its parent hears too.
        if (ended.child && outcome.kind !== 'released') childEnded(ctx, id, now);
        return { value: true };
      }),
  };
}

/**
 * The first in line, and the task that takes its turn: its owner's of the highest priority (sql/conditions.ts,
 * OWNER_PRIORITY_ORDER). The second read is needed even when no task has a priority: among equals the owner's task
 * that took its place first goes, which need not be the first in line (a task handed back by a lapsed lease keeps
 * its early place-taking, behind a place taken later), so leaving it out would change which task runs.
 */
function nextInLine({ q }: StoreContext, { now, scope }: ClaimTurn) {
  const head = scope.scoped ? q.nextInScope(now, scope) : q.nextClaimable(now);
  if (head === undefined) return undefined;
  const best = (scope.scoped ? q.ownerBestInScope(now, scope, head) : q.ownerBest(now, head)) ?? head;
  return { head, best };
}

/**
 * What one claim transaction weighs every task it claims by: the worker, its lease, the time, its scope and the pauses
 * in force (read once per transaction: no claim changes them, and no other writer shares the transaction).
 */
interface ClaimTurn {
  workerId: string;
  leaseMs: number;
  now: number;
  scope: ScopeParams;
  pauses: readonly PauseTarget[];
}

/** The turn of a claim transaction, read inside it. */
function claimTurn(
  ctx: StoreContext,
  workerId: string,
  leaseMs: number,
  now: number,
  scope: Parameters<typeof scopeParams>[0],
): ClaimTurn {
  return { workerId, leaseMs, now, scope: scopeParams(scope), pauses: pausesInForce(ctx) };
}

/**
 * The first in line that may run now: tasks an operator's pause holds back are paused on the way (pauses.ts), those
 * over the rate of their key wait for the start reserved for them (rate-limits.ts), and those whose concurrency key is
 * full are parked (slots.ts).
 */
function nextAdmitted(ctx: StoreContext, turn: ClaimTurn): ClaimCandidate | undefined {
  const { log } = ctx;
  const { now, pauses } = turn;
  let last = '';
  for (let parked = 0; parked < MAX_PARKED_PER_CLAIM; parked++) {
    const next = nextInLine(ctx, turn);
    if (next === undefined) return undefined;
    const { head, best } = next;
    if (admitUnpaused(ctx, pauses, best, now) && admitRate(ctx, best, now) && admit(ctx, best, now)) {
      // The first in line takes the place of the task that took its turn (a running task holds none).
      if (best.id !== head.id) ctx.q.movePlace(head, best);
      return best;
    }
    last = best.id;
  }
  // More to park than one claim does: the line may not be empty, so claims go on (here or in another process).
  log.changed({ taskId: last, runnable: true, cancelRequested: false });
  return undefined;
}

/** Leases the next runnable task (inside a lease transaction). */
function claimOne(ctx: StoreContext, turn: ClaimTurn): ClaimedTask | undefined {
  const { q, codec, log } = ctx;
  const candidate = nextAdmitted(ctx, turn);
  if (candidate === undefined) return undefined;
  const row = q.takeLease(candidate.id, turn.workerId, turn.now + turn.leaseMs);
  if (candidate.concurrency_key !== null) q.takeSlot(row.id, candidate.concurrency_key, row.attempt);
  // Its owner was told it waits for a version, its rate limit (shown-status.ts) or its debounce window: no longer, and subscribers
  // hear so.
  if (
    row.version_wait === row.attempt - 1 ||
    startsCountedRun(candidate, candidate.attempt) ||
    startsDebounced(row, candidate.attempt)
  )
    log.changed({ taskId: row.id, runnable: false, cancelRequested: false });
  const start = {
    takenOver: candidate.lease_owner !== null,
    steps: q.steps(row.id),
    inputs: q.inputs(row.id),
    attempts: q.stepAttempts(row.id),
  };
  return toClaimedTask(row, start, codec.open);
}

/**
 * Waits come due that this claim made runnable without taking them: one change tells other processes on the file
 * that there is work to claim.
 */
function announceWoken(
  { log }: StoreContext,
  woken: readonly string[],
  claimed: readonly ClaimedTask[],
): void {
  const taken = new Set(claimed.map((t) => t.id));
  const left = woken.find((id) => !taken.has(id));
  if (left !== undefined) log.changed({ taskId: left, runnable: true, cancelRequested: false }, 'log');
}

/** What a scope leaves out: counted, and marked once it waited for a version (shown-status.ts). */
function scopeWrites({ q, log, writes }: StoreContext): Pick<RunWrites, 'outOfScope' | 'markVersionWaits'> {
  return {
    async outOfScope(scope, now) {
      return q.outOfScope(now, scopeParams(scope));
    },
    async markVersionWaits(scope, now, before, max) {
      return writes.tx(() => {
        const marked = q.markVersionWaits(now, before, max, scopeParams(scope));
        for (const id of marked) log.changed({ taskId: id, runnable: false, cancelRequested: false });
        return marked.length;
      });
    },
  };
}

/** `end` queues a run ending for the group commit. */
export function runWrites(ctx: StoreContext, end: (ending: Ending) => Promise<boolean>): RunWrites {
  const { q, log, writes } = ctx;
  return {
    async claim(workerId, leaseMs, now, scope): Promise<ClaimedTask | undefined> {
      return writes.leaseTx(() => {
        const woken = q.requeueWoken(now);
        const task = claimOne(ctx, claimTurn(ctx, workerId, leaseMs, now, scope));
        announceWoken(ctx, woken, task === undefined ? [] : [task]);
        return task;
      });
    },

    async claimBatch(workerId, leaseMs, now, max, scope): Promise<ClaimedTask[]> {
      return writes.leaseTx(() => {
        const claimed: ClaimedTask[] = [];
        let batch = q.requeueWoken(now);
        const woken = [...batch];
        const turn = claimTurn(ctx, workerId, leaseMs, now, scope);
        while (claimed.length < max) {
          const task = claimOne(ctx, turn);
          if (task !== undefined) {
            claimed.push(task);
            continue;
          }
          // The line is empty, and more waits may be due than one pass gives places to.
          if (batch.length < WOKEN_BATCH) break;
          batch = q.requeueWoken(now);
          if (batch.length === 0) break;
          woken.push(...batch);
        }
        announceWoken(ctx, woken, claimed);
        return claimed;
      });
    },

    ...scopeWrites(ctx),

    async renew(id, token, leaseMs, now): Promise<RenewResult> {
      const row = await writes.leaseTx(() => q.renew(id, token, now + leaseMs, now));
      return row === undefined
        ? { held: false, cancelRequested: false }
        : { held: true, cancelRequested: row.cancel_requested === 1 };
    },

    async saveStep(id, token, name, value, now, options) {
      return writes.immediate(() => {
        if (!q.holds(id, token)) return false;
        const text = q.stepText(id, name, JSON.stringify(value));
        // Inside the write transaction, which no other writer shares: the count holds until the insert.
        const over = overStoredBytes(q.ownerBytesOf(id), storedBytes(text), options?.storedBytesLimit);
        if (over !== undefined) throw over;
        q.putStep(id, name, text, options?.startedAt ?? null, now);
        return true;
      });
    },

    async saveStepFailure(id, token, name, failure, now) {
      return writes.immediate(() => {
        if (!q.holds(id, token)) return false;
        q.putStepFailure(id, name, failure, now);
        return true;
      });
    },

    async setStatusMessage(id, token, message, now, progress) {
      return writes.tx(() => {
        const ok = q.setStatusMessage(id, token, message, now, progress);
        if (ok) log.changed({ taskId: id, runnable: false, cancelRequested: false });
        return ok;
      });
    },

    finish: (id, token, outcome, now) => end({ id, token, outcome, now }),
  };
}
