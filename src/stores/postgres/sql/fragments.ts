// SQL fragments the PostgreSQL statements share: task states, the fence of a run's writes, the columns a committed
// change carries, and the notification sent in the statement that commits a change.
import pg from 'pg';

export const NON_TERMINAL = `status IN ('working','input_required')`;
/** A waiting task whose time ($3) has come: claimable like a runnable one (it released its lease to wait). */
export const DUE = (now: string): string =>
  `wake_at IS NOT NULL AND wake_at <= ${now} AND status = 'working' AND (expires_at IS NULL OR expires_at > ${now})`;
/** The fence: the run holding `token` still owns a lease on a working task. */
export const FENCED = `id = $1 AND attempt = $2 AND status = 'working' AND lease_owner IS NOT NULL`;

/**
 * What a statement that commits a change returns so the change can carry the task's snapshot (TaskChange.committed;
 * rows.ts SnapshotColumns): the row as the statement left it.
 */
export const SNAPSHOT_COLUMNS = `id, status, status_message, created_at, updated_at, ttl_ms, poll_interval_ms, expires_at,
  result, error, revision`;

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
