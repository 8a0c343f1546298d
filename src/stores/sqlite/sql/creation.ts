// Prepared SQL of the SQLite task store. Creation: the insert (its idempotency key may be taken), the key's holder, a
// task's sealed flag, and the bytes an owner stores (the byte quota).
import type { TaskOwner } from '../../../tasks/task.js';
import type { KeyHolder } from '../../core/idempotency.js';
import type { EncodedTask } from '../../encode-task.js';
import type { SqliteDatabase } from '../database.js';
import { FAIR_PLACE } from './conditions.js';

export function prepareCreationQueries(db: SqliteDatabase) {
  const insert = db.prepare(`
    INSERT INTO tasks (id, tenant, principal, tool, args, status, status_message, created_at, updated_at, ttl_ms,
      poll_interval_ms, expires_at, replay_after_crash, client_caps, runnable, sealed, idempotency_key, fair_at,
      placed_at, tool_version, created_message, concurrency_key, concurrency_limit, concurrency_hold, priority,
      rate_key, rate_limit, rate_period_ms)
    VALUES (@id, @tenant, @principal, @tool, @args, 'working', @statusMessage, @now, @now, @ttlMs, @pollIntervalMs,
      @expiresAt, @replay, @caps, 1, @sealed, @key, ${FAIR_PLACE}, @now, @toolVersion,
      coalesce(@statusMessage, ''), @concurrencyKey, @concurrencyLimit, @concurrencyHold, @priority, @rateKey,
      @rateLimit, @ratePeriodMs)
    ON CONFLICT (idempotency_key, tenant, principal, tool) WHERE idempotency_key IS NOT NULL DO NOTHING`);
  const keyed = db.prepare(
    `SELECT id, args, expires_at AS expiresAt FROM tasks
     WHERE tenant = ? AND principal = ? AND tool = ? AND idempotency_key = ?`,
  );
  const releaseKey = db.prepare(`UPDATE tasks SET idempotency_key = NULL WHERE id = ?`);
  const insertAnswer = db.prepare(
    `INSERT INTO task_inputs (task_id, key, request, answer, asked_at, answered_at) VALUES (?, ?, NULL, ?, ?, ?)`,
  );
  const isSealed = db.prepare(`SELECT sealed FROM tasks WHERE id = ?`).pluck();
  // The byte quota: the count the triggers of migration 18 keep (stores/stored-bytes.ts).
  const ownerBytes = db
    .prepare(`SELECT coalesce((SELECT bytes FROM owner_bytes WHERE tenant = ? AND principal = ?), 0)`)
    .pluck();
  return {
    /** False when the task's idempotency key is held by another task (then nothing is inserted). */
    insertTask(task: EncodedTask): boolean {
      const {
        answers,
        createdAt,
        idempotencyKey,
        activeLimit: _active,
        storedLimit: _stored,
        tenantActiveLimit: _tenantActive,
        tenantStoredLimit: _tenantStored,
        storedBytesLimit: _storedBytes,
        ...row
      } = task;
      const { changes } = insert.run({
        ...row,
        sealed: row.sealed ? 1 : 0,
        now: createdAt,
        expiresAt: row.ttlMs === null ? null : createdAt + row.ttlMs,
        replay: row.replay ? 1 : 0,
        key: idempotencyKey,
      });
      if (changes === 0) return false;
      for (const [key, answer] of answers) insertAnswer.run(task.id, key, answer, createdAt, createdAt);
      return true;
    },
    keyed: (owner: TaskOwner, tool: string, key: string) =>
      keyed.get(owner.tenant, owner.principal, tool, key) as KeyHolder | undefined,
    releaseKey: (id: string) => releaseKey.run(id),
    isSealed: (id: string) => isSealed.get(id) === 1,
    ownerBytes: (owner: TaskOwner) => ownerBytes.get(owner.tenant, owner.principal) as number,
  };
}
