// Prepared SQL of the SQLite task store. Claims: the next claimable task, its lease, and what its run starts from.
import type { SqliteDatabase } from '../database.js';
import type { TaskRow } from '../rows.js';
import { CLAIMABLE, DUE, FAIR_PLACE, LINE_ORDER, OWNER_PRIORITY_ORDER, RENEWABLE } from './conditions.js';

/** How many waits come due are given their new place per claim transaction (more wait for the next claim). */
export const WOKEN_BATCH = 128;

/**
 * What a claim reads of the first in line: its lease, its tool (pauses.ts), its rate limit (rate-limits.ts) and
 * concurrency limit (slots.ts).
 */
export const CANDIDATE_COLUMNS = `id, lease_owner, tenant, principal, tool, concurrency_key, concurrency_limit, fair_at,
  attempt, rate_key, rate_limit, rate_period_ms, rate_reserved_at`;
export interface ClaimCandidate {
  id: string;
  tool: string;
  lease_owner: string | null;
  tenant: string;
  principal: string;
  concurrency_key: string | null;
  concurrency_limit: number | null;
  fair_at: number | null;
  /** Runs claimed before (0: this is its first run). */
  attempt: number;
  rate_key: string | null;
  rate_limit: number | null;
  rate_period_ms: number | null;
  rate_reserved_at: number | null;
}

/** A wait come due, as requeueWoken reads it. */
interface Due {
  id: string;
  tenant: string;
  principal: string;
  wake_at: number;
  fair_at: number;
  created_at: number;
}

export function prepareClaimQueries(db: SqliteDatabase) {
  // The first in line (conditions.ts, FAIR_PLACE). Waits come due join the line first (requeueWoken).
  const nextRunnable = db.prepare(`
    SELECT ${CANDIDATE_COLUMNS} FROM tasks INDEXED BY tasks_fair WHERE runnable = 1 AND ${CLAIMABLE}
    ORDER BY ${LINE_ORDER} LIMIT 1`);
  // The owner's waiting task that takes its turn (conditions.ts, OWNER_PRIORITY_ORDER).
  const ownerBest = db.prepare(`
    SELECT ${CANDIDATE_COLUMNS} FROM tasks INDEXED BY tasks_owner_priority
    WHERE runnable = 1 AND tenant = @tenant AND principal = @principal AND ${CLAIMABLE}
    ORDER BY ${OWNER_PRIORITY_ORDER} LIMIT 1`);
  const movePlace = db.prepare(`UPDATE tasks SET fair_at = ? WHERE id = ?`);
  // In wake-up order only: a tie-break in SQL would sort every task due at the same time (tasks_wake has no more).
  const dueWaits = db.prepare(`
    SELECT id, tenant, principal, wake_at, coalesce(fair_at, created_at) AS fair_at, created_at FROM tasks
    WHERE ${DUE} ORDER BY wake_at LIMIT ${WOKEN_BATCH}`);
  const requeue = db.prepare(
    `UPDATE tasks SET fair_at = ${FAIR_PLACE}, placed_at = @now, runnable = 1, wake_at = NULL WHERE id = @id`,
  );
  // The run reads its children after this: a child's ending noted before it (child_ended, children.ts) is not news.
  // A candidate is runnable already (read so in this transaction): `runnable` is not set again, which would rewrite
  // its entries in the three indexes of runnable tasks.
  const takeLease = db.prepare(`
    UPDATE tasks SET lease_owner = ?, lease_until = ?, attempt = attempt + 1, wake_at = NULL,
      child_ended = NULL,
      status_message = CASE WHEN attempt = 0 AND debounce_key IS NOT NULL THEN NULL ELSE status_message END
    WHERE id = ? RETURNING *`);
  const steps = db.prepare(`SELECT name, value FROM task_steps WHERE task_id = ? ORDER BY seq, name`).raw();
  const inputs = db.prepare(`SELECT key, answer FROM task_inputs WHERE task_id = ?`).raw();
  const stepAttempts = db
    .prepare(`SELECT name, failed, last_failure FROM task_step_attempts WHERE task_id = ?`)
    .raw();
  // A run waiting for live input (live-input.ts) keeps its lease too. RENEWABLE: a lapsed lease of a limited task is
  // lost, its slot being free for another run since it lapsed.
  const renew = db.prepare(`
    UPDATE tasks SET lease_until = @until WHERE id = @id AND attempt = @token
      AND status IN ('working','input_required') AND lease_owner IS NOT NULL AND ${RENEWABLE}
    RETURNING cancel_requested`);
  return {
    /**
     * Up to WOKEN_BATCH waits come due (earliest wake-up first; at one wake-up, in their earlier order) take a new
     * place in line, as new tasks of their owners would now, and become runnable; returns their ids.
     */
    requeueWoken(now: number): string[] {
      const due = (dueWaits.all({ now }) as Due[]).sort(
        (a, b) => a.wake_at - b.wake_at || a.fair_at - b.fair_at || a.created_at - b.created_at,
      );
      for (const t of due) requeue.run({ id: t.id, now, tenant: t.tenant, principal: t.principal });
      return due.map((t) => t.id);
    },
    /** The first in line of the runnable tasks. */
    nextClaimable: (now: number) => nextRunnable.get({ now }) as ClaimCandidate | undefined,
    /** The task of the owner of `head` (first in line) that takes its turn: its highest priority first. */
    ownerBest: (now: number, head: ClaimCandidate) =>
      ownerBest.get({ now, tenant: head.tenant, principal: head.principal }) as ClaimCandidate | undefined,
    /** The first in line, whose turn its owner's task `to` took, takes that task's place (OWNER_PRIORITY_ORDER). */
    movePlace: (head: ClaimCandidate, to: ClaimCandidate) => movePlace.run(to.fair_at, head.id),
    takeLease: (id: string, owner: string, until: number) => takeLease.get(owner, until, id) as TaskRow,
    /** `[name, value]` of the task's done steps, in the order they were done. */
    steps: (id: string) => steps.all(id) as [string, string][],
    /** `[key, answer]` of every input the task asked or was given (answer null while open). */
    inputs: (id: string) => inputs.all(id) as [string, string | null][],
    stepAttempts: (id: string) => stepAttempts.all(id) as [string, number, string][],
    renew: (id: string, token: number, until: number, now: number) =>
      renew.get({ until, id, token, now }) as { cancel_requested: number } | undefined,
  };
}
