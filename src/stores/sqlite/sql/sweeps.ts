// Prepared SQL of the SQLite task store. The sweeps: expiry, then purge; and the one-time keys they sweep too.
import type { SqliteDatabase } from '../database.js';
import { NON_TERMINAL } from './conditions.js';

export function prepareSweepQueries(db: SqliteDatabase) {
  // The sweep every few seconds: through the index of unfinished tasks by expiry, not tasks_status (every working
  // task, sleeping ones included) nor tasks_expiry (every finished task awaiting purge).
  const expire = db.prepare(`
    UPDATE tasks INDEXED BY tasks_live_expiry SET status = 'failed', error = ?, status_message = 'Task expired before it finished.', updated_at = ?,
      runnable = 0, lease_owner = NULL, lease_until = NULL, wake_at = NULL
    WHERE expires_at IS NOT NULL AND expires_at <= ? AND ${NON_TERMINAL} RETURNING id`);
  const purge = db.prepare(`DELETE FROM tasks WHERE expires_at IS NOT NULL AND expires_at <= ?`);
  const consume = db.prepare(
    `INSERT INTO consumed_keys (key, expires_at) VALUES (?, ?) ON CONFLICT DO NOTHING`,
  );
  const purgeConsumed = db.prepare(`DELETE FROM consumed_keys WHERE expires_at <= ?`);
  return {
    consume: (key: string, expiresAt: number) => consume.run(key, expiresAt).changes === 1,
    purgeConsumed: (now: number) => purgeConsumed.run(now).changes,
    expire: (now: number, error: string) =>
      (expire.all(error, now, now) as { id: string }[]).map((r) => r.id),
    purge: (cutoff: number) => purge.run(cutoff).changes,
  };
}
