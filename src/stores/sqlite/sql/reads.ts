// Prepared SQL of the SQLite task store. Reads: a task for its owner or an operator, the next wake-up, and the counts.
import type { DoneStep } from '../../../tasks/inspection-steps.js';
import type { TaskOwner, TaskStatus } from '../../../tasks/task.js';
import type { HistoryRow } from '../../status-history.js';
import type { SqliteDatabase } from '../database.js';
import type { InputRow, TaskRow } from '../rows.js';
import { DUE, WORKING } from './conditions.js';

/**
 * Only what snapshots and owner writes need (arguments and capabilities stay on disk), and whether the task has
 * children (tasks_parent).
 */
const GET_OWNED = `SELECT id, status, status_message, created_at, updated_at, ttl_ms, poll_interval_ms, expires_at, result, error,
       lease_owner, lease_until, tool, tool_version, attempt, version_wait, progress, concurrency_key, parked_at,
       rate_key, rate_reserved_at, wake_at, paused_at, parent_id,
       EXISTS (SELECT 1 FROM tasks c WHERE c.parent_id = tasks.id) AS has_children
     FROM tasks WHERE id = ? AND tenant = ? AND principal = ?`;

export function prepareReadQueries(db: SqliteDatabase) {
  const getOwned = db.prepare(GET_OWNED);
  const outstanding = db.prepare(
    `SELECT key, request, answer FROM task_inputs WHERE task_id = ? AND answer IS NULL AND superseded = 0 ORDER BY asked_at, key`,
  );
  const nextWake = db
    .prepare(
      `SELECT wake_at FROM tasks WHERE wake_at IS NOT NULL AND wake_at > ? AND ${WORKING} ORDER BY wake_at LIMIT 1`,
    )
    .pluck();
  // One statement, one snapshot. Each count reads a range of tasks_status (or the runnable tasks of tasks_fair), never
  // the table.
  const stats = db.prepare(`
    SELECT
      (SELECT count(*) FROM tasks WHERE status = 'working') AS working,
      (SELECT count(*) FROM tasks WHERE status = 'input_required') AS input_required,
      (SELECT count(*) FROM tasks WHERE status = 'completed') AS completed,
      (SELECT count(*) FROM tasks WHERE status = 'failed') AS failed,
      (SELECT count(*) FROM tasks WHERE status = 'cancelled') AS cancelled,
      (SELECT count(*) FROM tasks WHERE runnable = 1 AND (lease_owner IS NULL OR lease_until < @now)
        AND (expires_at IS NULL OR expires_at > @now)) + (SELECT count(*) FROM tasks WHERE ${DUE}) AS runnable`);
  // Per creation (the quota): only the owner's unfinished tasks, never the owner's whole history (tasks_owner_created).
  const countActive = db
    .prepare(
      `SELECT count(*) FROM tasks INDEXED BY tasks_owner_active
       WHERE tenant = ? AND principal = ? AND status IN ('working','input_required')`,
    )
    .pluck();
  // Per creation under a storage quota: all the owner's kept tasks, an index-only count (tasks_owner_created).
  const countStored = db
    .prepare(`SELECT count(*) FROM tasks INDEXED BY tasks_owner_created WHERE tenant = ? AND principal = ?`)
    .pluck();
  // The same for a whole tenant (the leading column of both indexes).
  const countTenantActive = db
    .prepare(
      `SELECT count(*) FROM tasks INDEXED BY tasks_owner_active
       WHERE tenant = ? AND status IN ('working','input_required')`,
    )
    .pluck();
  const countTenantStored = db
    .prepare(`SELECT count(*) FROM tasks INDEXED BY tasks_owner_created WHERE tenant = ?`)
    .pluck();
  const countRunnable = db.prepare(
    `SELECT (SELECT count(*) FROM tasks WHERE runnable = 1 AND (lease_owner IS NULL OR lease_until < @now)
       AND (expires_at IS NULL OR expires_at > @now)) + (SELECT count(*) FROM tasks WHERE ${DUE}) AS n`,
  );
  const inspectTask = db.prepare(`SELECT * FROM tasks WHERE id = ?`);
  const doneSteps = db.prepare(
    `SELECT name, seq, started_at AS startedAt, saved_at AS savedAt FROM task_steps WHERE task_id = ?`,
  );
  // The retries made of a task (through tasks_retries), oldest first, the first 100.
  const retries = db
    .prepare(`SELECT id FROM tasks WHERE retry_of = ? ORDER BY created_at, id LIMIT 100`)
    .pluck();
  const history = db
    .prepare(
      `SELECT seq, at, status, message FROM task_history WHERE task_created = ? AND task_id = ? ORDER BY seq`,
    )
    .raw();
  return {
    getOwned: (id: string, owner: TaskOwner) =>
      getOwned.get(id, owner.tenant, owner.principal) as TaskRow | undefined,
    outstandingInputs: (id: string) => outstanding.all(id) as InputRow[],
    nextWake: (now: number) => nextWake.get(now) as number | undefined,
    inspect: (id: string) => inspectTask.get(id) as TaskRow | undefined,
    doneSteps: (id: string) => doneSteps.all(id) as DoneStep[],
    history: (id: string, createdAt: number) => history.all(createdAt, id) as HistoryRow[],
    retries: (id: string) => retries.all(id) as string[],
    stats: (now: number) => stats.get({ now }) as Record<TaskStatus | 'runnable', number>,
    countActive: (owner: TaskOwner) => countActive.get(owner.tenant, owner.principal) as number,
    countStored: (owner: TaskOwner) => countStored.get(owner.tenant, owner.principal) as number,
    countTenantActive: (tenant: string) => countTenantActive.get(tenant) as number,
    countTenantStored: (tenant: string) => countTenantStored.get(tenant) as number,
    countRunnable: (now: number) => (countRunnable.get({ now }) as { n: number }).n,
  };
}
