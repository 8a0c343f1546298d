// SQL fragments the PostgreSQL statements share: task states, the fence of a run's writes, the columns a committed
// change carries, and the notification sent in the statement that commits a change.
import pg from 'pg';

export const NON_TERMINAL = `status IN ('working','input_required')`;
/**
 * A waiting task whose time has come (it released its lease to wait): the next claim gives it a new place in line and
 * makes it runnable (runs.ts, claim).
 */
export const DUE = (now: string): string =>
  `wake_at IS NOT NULL AND wake_at <= ${now} AND status = 'working' AND (expires_at IS NULL OR expires_at > ${now})`;
/** The distance between two places in line of one owner (ms-scaled, so that places follow creation times). */
export const FAIR_STEP = 0.001;

/** A runnable task (alias `t`) no live lease holds, not expired at `now`: one waiting its turn in line. */
export const CLAIMABLE = (t: string, now: string): string =>
  `(${t}.lease_owner IS NULL OR ${t}.lease_until < ${now}) AND (${t}.expires_at IS NULL OR ${t}.expires_at > ${now})`;

/**
 * The place in line (`fair_at`) a task of the owner (`tenant`, `principal`: SQL expressions) takes at `now`: the place
 * of the first task waiting in line (the head; `now` when none waits), or just behind the owner's last waiting task.
 * Running tasks do not count: a long run neither holds the head nor pushes its owner's next task back. New tasks take
 * it (creation.ts), and so do tasks whose wait ends (runs.ts, owner-writes.ts) and retried ones (admin.ts), each with
 * the time it took it (`placed_at`): at one place the first to take it goes first (LINE_ORDER). So one owner's
 * backlog is spread out behind the head while another owner's task goes to it, claims alternate between the owners
 * that wait, and tasks woken again and again queue behind whoever waits at the head (sqlite/sql/conditions.ts says
 * the same rule for SQLite). Written as the owner's last place plus the step, else the head's (or `now`): the greater
 * of the two, as an owner's last waiting task is at or behind the head, and the head is looked for only when the owner
 * has no task waiting (COALESCE evaluates its arguments in order).
 */
export const fairPlace = (s: string, now: string, tenant: string, principal: string): string => `coalesce(
  (SELECT o.fair_at FROM ${s}.tasks o
    WHERE o.runnable AND o.tenant = ${tenant} AND o.principal = ${principal} AND o.fair_at IS NOT NULL
      AND ${CLAIMABLE('o', now)} ORDER BY o.fair_at DESC LIMIT 1) + ${FAIR_STEP},
  greatest(coalesce((SELECT h.fair_at FROM ${s}.tasks h WHERE h.runnable AND h.fair_at IS NOT NULL
    AND ${CLAIMABLE('h', now)} ORDER BY h.fair_at NULLS FIRST LIMIT 1), ${now}), 0))`;

/** The order of the line (tasks_fair); a place taken by an older replica (no placed_at) first among its place. */
export const LINE_ORDER = `fair_at NULLS FIRST, placed_at NULLS FIRST, created_at`;
/**
 * Priorities (migration 23): each turn of an owner in line goes to its waiting task of the highest priority
 * (tasks_owner_priority; among equals the first to take its place), and the owner's tasks first in line that were
 * not claimed take the claimed ones' places. The owners' turns stay where they were; only which of an owner's tasks
 * takes each turn changes (sqlite/sql/conditions.ts says the same for SQLite).
 */
export const OWNER_PRIORITY_ORDER = `priority DESC, placed_at NULLS FIRST, fair_at NULLS FIRST, created_at`;

/** The fence: the run holding `token` still owns a lease on a working task. */
export const FENCED = `id = $1 AND attempt = $2 AND status = 'working' AND lease_owner IS NOT NULL`;

/**
 * What a statement that commits a change returns so the change can carry the task's snapshot (TaskChange.committed;
 * rows.ts SnapshotColumns): the row as the statement left it.
 */
export const SNAPSHOT_COLUMNS = `id, status, status_message, created_at, updated_at, ttl_ms, poll_interval_ms, expires_at,
  result, error, revision, tool, tool_version, attempt, version_wait, progress, concurrency_key, parked_at, rate_key,
  rate_reserved_at, wake_at, paused_at`;

/**
 * The owner test of a lookup by id ($2 tenant, $3 principal). Written as `(…) IS TRUE` (the columns are NOT NULL,
 * so it means the same) so that the planner cannot serve it from the owner-prefixed listing index: with the
 * statistics of a table that grew quickly (autovacuum has not analysed it yet) it otherwise picked that index
 * over the primary key and read every task of the owner for each lookup.
 */
export const OWNED_BY = (alias: string): string => `(${alias}tenant = $2 AND ${alias}principal = $3) IS TRUE`;

/** The select-list item that notifies the change of task `id` (SQL expressions) when the statement commits. */
export type Notify = (id: string, runnable: string, cancel: string) => string;

/** Channel and origin are fixed per store instance (a validated name and random hex): inlined as literals. */
export function notifier(channel: string, origin: string): Notify {
  return (id, runnable, cancel) =>
    `pg_notify(${pg.escapeLiteral(channel)}, json_build_object('origin', ${pg.escapeLiteral(origin)}, ` +
    `'taskId', ${id}, 'runnable', ${runnable}, 'cancelRequested', ${cancel})::text) AS notified`;
}

/**
 * The CTEs that record the requests of an ask, after a CTE `u` that returned the asking task's id ($4 now, $5 keys,
 * $6 requests): each request kept (asked again when unanswered), and the task's other unanswered requests superseded.
 */
export const ASK_INPUTS = (s: string): string => `asked AS (
        INSERT INTO ${s}.task_inputs AS i (task_id, key, request, asked_at)
        SELECT u.id, r.key, r.request, $4 FROM u, unnest($5::text[], $6::text[]) AS r(key, request)
        ON CONFLICT (task_id, key) DO UPDATE SET superseded = false WHERE i.answer IS NULL
      ), superseded AS (
        UPDATE ${s}.task_inputs i SET superseded = true FROM u
        WHERE i.task_id = u.id AND i.answer IS NULL AND NOT i.superseded AND i.key <> ALL ($5::text[])
      )`;

/**
 * The new places in line of the tasks of a CTE `picked` (id, tenant, principal, earlier, taken, created_at) made
 * runnable at `now` (a pause resumed, a slot freed): each takes the place a new task of its owner would, an owner's
 * several one behind the other in their earlier order.
 */
export const placedAgain = (s: string, now: string): string => `
  SELECT p.id, ${fairPlace(s, now, 'p.tenant', 'p.principal')}
    + ${FAIR_STEP} * (row_number() OVER (
      PARTITION BY p.tenant, p.principal ORDER BY p.earlier, p.taken, p.created_at) - 1) AS fair_at
  FROM picked p`;
