// Prepared SQL of the SQLite task store. Claims: the next claimable task, its lease, and what its run starts from.
import type { JsonValue, JsonObject, StepAttempts, StepFailure } from '../../../tasks/task.js';
import type { PayloadCodec } from '../codec.js';
import type { SqliteDatabase } from '../database.js';
import type { TaskRow } from '../rows.js';
import { sealedAt } from '../../payload-sealing.js';
import { CLAIMABLE, DUE, FAIR_PLACE, LINE_ORDER } from './conditions.js';

/** How many waits come due are given their new place per claim transaction (more wait for the next claim). */
export const WOKEN_BATCH = 128;

/** What a claim reads of the first in line: its lease, and its concurrency limit (slots.ts). */
export const CANDIDATE_COLUMNS = `id, lease_owner, tenant, principal, concurrency_key, concurrency_limit`;
export interface ClaimCandidate {
  id: string;
  lease_owner: string | null;
  tenant: string;
  principal: string;
  concurrency_key: string | null;
  concurrency_limit: number | null;
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

export function prepareClaimQueries(db: SqliteDatabase, codec: PayloadCodec) {
  // The first in line (conditions.ts, FAIR_PLACE). Waits come due join the line first (requeueWoken).
  const nextRunnable = db.prepare(`
    SELECT ${CANDIDATE_COLUMNS} FROM tasks INDEXED BY tasks_fair WHERE runnable = 1 AND ${CLAIMABLE}
    ORDER BY ${LINE_ORDER} LIMIT 1`);
  // In wake-up order only: a tie-break in SQL would sort every task due at the same time (tasks_wake has no more).
  const dueWaits = db.prepare(`
    SELECT id, tenant, principal, wake_at, coalesce(fair_at, created_at) AS fair_at, created_at FROM tasks
    WHERE ${DUE} ORDER BY wake_at LIMIT ${WOKEN_BATCH}`);
  const requeue = db.prepare(
    `UPDATE tasks SET fair_at = ${FAIR_PLACE}, placed_at = @now, runnable = 1, wake_at = NULL WHERE id = @id`,
  );
  const takeLease = db.prepare(`
    UPDATE tasks SET lease_owner = ?, lease_until = ?, attempt = attempt + 1, runnable = 1, wake_at = NULL
    WHERE id = ? RETURNING *`);
  const steps = db.prepare(`SELECT name, value FROM task_steps WHERE task_id = ? ORDER BY seq, name`);
  const answers = db.prepare(`SELECT key, answer FROM task_inputs WHERE task_id = ? AND answer IS NOT NULL`);
  const askedKeys = db.prepare(`SELECT key FROM task_inputs WHERE task_id = ?`);
  const stepAttempts = db.prepare(
    `SELECT name, failed, last_failure FROM task_step_attempts WHERE task_id = ?`,
  );
  // A run waiting for live input (live-input.ts) keeps its lease too.
  const renew = db.prepare(`
    UPDATE tasks SET lease_until = ? WHERE id = ? AND attempt = ? AND status IN ('working','input_required')
      AND lease_owner IS NOT NULL
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
    takeLease: (id: string, owner: string, until: number) => takeLease.get(owner, until, id) as TaskRow,
    /** The task's done steps and the order they were done in. */
    steps(id: string): { steps: Record<string, JsonValue>; order: string[] } {
      const rows = steps.all(id) as { name: string; value: string }[];
      const open = (r: (typeof rows)[number]) =>
        codec.open(r.value, sealedAt('task_steps.value', id, r.name));
      const values = rows.map((r) => [r.name, JSON.parse(open(r)) as JsonValue] as const);
      return { steps: Object.fromEntries(values), order: rows.map((r) => r.name) };
    },
    answers(id: string): Record<string, JsonObject> {
      const out: Record<string, JsonObject> = {};
      for (const r of answers.all(id) as { key: string; answer: string }[])
        out[r.key] = JSON.parse(
          codec.open(r.answer, sealedAt('task_inputs.answer', id, r.key)),
        ) as JsonObject;
      return out;
    },
    askedKeys: (id: string) => (askedKeys.all(id) as { key: string }[]).map((r) => r.key),
    stepAttempts(id: string): Record<string, StepAttempts> {
      const out: Record<string, StepAttempts> = {};
      for (const r of stepAttempts.all(id) as { name: string; failed: number; last_failure: string }[])
        out[r.name] = {
          failed: r.failed,
          last: JSON.parse(
            codec.open(r.last_failure, sealedAt('task_step_attempts.last_failure', id, r.name)),
          ) as StepFailure,
        };
      return out;
    },
    renew: (id: string, token: number, until: number) =>
      renew.get(until, id, token) as { cancel_requested: number } | undefined,
  };
}
