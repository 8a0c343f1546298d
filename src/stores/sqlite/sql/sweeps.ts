// Prepared SQL of the SQLite task store. The sweeps: expiry, then purge; and the one-time keys they sweep too.
// Each sweep statement touches at most SWEEP_CHUNK rows (the sweep runs it again, in a transaction of its own, until
// a chunk comes back short): what one statement changes, and so its statement journal, stays small however large
// the backlog.
import type { SqliteDatabase } from '../database.js';
import { NON_TERMINAL } from './conditions.js';

/** The most tasks (or one-time keys) one sweep statement expires or deletes. */
export const SWEEP_CHUNK = 128;

export function prepareSweepQueries(db: SqliteDatabase) {
  // The sweep every few seconds: through the index of unfinished tasks by expiry, not tasks_status (every working
  // task, sleeping ones included) nor tasks_expiry (every finished task awaiting purge).
  const expire = db.prepare(`
    UPDATE tasks SET status = 'failed', error = ?, status_message = 'Task expired before it finished.', updated_at = ?,
      runnable = 0, lease_owner = NULL, lease_until = NULL, wake_at = NULL
    WHERE id IN (SELECT id FROM tasks INDEXED BY tasks_live_expiry
      WHERE expires_at IS NOT NULL AND expires_at <= ? AND ${NON_TERMINAL} LIMIT ?) RETURNING id`);
  const purge = db.prepare(`
    DELETE FROM tasks WHERE id IN (SELECT id FROM tasks
      WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT ?)`);
  const consume = db.prepare(
    `INSERT INTO consumed_keys (key, expires_at) VALUES (?, ?) ON CONFLICT DO NOTHING`,
  );
  const purgeConsumed = db.prepare(`
    DELETE FROM consumed_keys WHERE key IN (SELECT key FROM consumed_keys
      WHERE expires_at <= ? LIMIT ?)`);
  return {
    consume: (key: string, expiresAt: number) => consume.run(key, expiresAt).changes === 1,
    /** Deletes up to `limit` expired one-time keys; how many. */
    purgeConsumed: (now: number, limit = SWEEP_CHUNK) => purgeConsumed.run(now, limit).changes,
    /** Fails up to `limit` unfinished tasks past their TTL; their ids. */
    expire: (now: number, error: string, limit = SWEEP_CHUNK) =>
      (expire.all(error, now, now, limit) as { id: string }[]).map((r) => r.id),
    /** Deletes up to `limit` tasks expired by `cutoff`; how many. */
    purge: (cutoff: number, limit = SWEEP_CHUNK) => purge.run(cutoff, limit).changes,
  };
}
