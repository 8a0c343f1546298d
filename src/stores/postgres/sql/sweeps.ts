// SQL of the PostgreSQL task store. The sweeps every replica runs: expiry, then purge.
import { NON_TERMINAL, type Notify } from './fragments.js';

/** `s`: the quoted schema name. */
export function sweepSql(s: string, notify: Notify) {
  return {
    /**
     * $1 error, $2 now. SKIP LOCKED: rows another replica is expiring (or a run is finishing) right now are left
     * to that writer or the next sweep, and two sweepers never deadlock on each other's row order.
     */
    expire: `
      WITH due AS (
        SELECT id FROM ${s}.tasks
        WHERE expires_at IS NOT NULL AND expires_at <= $2 AND ${NON_TERMINAL}
        FOR UPDATE SKIP LOCKED
      ), e AS (
        UPDATE ${s}.tasks t SET status = 'failed', error = $1, status_message = 'Task expired before it finished.',
          updated_at = $2, runnable = false, lease_owner = NULL, lease_until = NULL, wake_at = NULL,
          revision = t.revision + 1
        FROM due WHERE t.id = due.id RETURNING t.id
      ) SELECT e.id, ${notify('e.id', 'false', 'true')} FROM e`,

    purge: `
      WITH d AS (
        DELETE FROM ${s}.tasks WHERE id IN (
          SELECT id FROM ${s}.tasks WHERE expires_at IS NOT NULL AND expires_at <= $1 FOR UPDATE SKIP LOCKED
        ) RETURNING 1
      ) SELECT count(*)::int AS n FROM d`,
  };
}
