// SQL of the PostgreSQL task store. The sweeps every replica runs: expiry, then purge; and the one-time keys they
// sweep too.
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

    /** $1 key, $2 expiry. A row back: this statement recorded the key (a key already there returns none). */
    consume: `INSERT INTO ${s}.consumed_keys (key, expires_at) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING RETURNING 1`,

    /** $1 now. SKIP LOCKED, as above: two replicas sweeping at once never wait for each other. */
    purgeConsumed: `
      DELETE FROM ${s}.consumed_keys WHERE key IN (
        SELECT key FROM ${s}.consumed_keys WHERE expires_at <= $1 FOR UPDATE SKIP LOCKED
      )`,
  };
}
