// Prepared SQL of the SQLite task store. Creation: the insert (its idempotency key may be taken), the key's holder, the
// holder of a debounce key and its replaced arguments, a task's sealed flag, and the bytes an owner stores (the byte
// quota).
import type { TaskOwner } from '../../../tasks/task.js';
import type { DebounceHolder } from '../../core/debounce.js';
import type { KeyHolder } from '../../core/idempotency.js';
import type { EncodedTask } from '../../encode-task.js';
import type { SqliteDatabase } from '../database.js';
import { FAIR_PLACE } from './conditions.js';

export function prepareCreationQueries(db: SqliteDatabase) {
  const insert = db.prepare(`
    INSERT INTO tasks (id, tenant, principal, tool, args, status, status_message, created_at, updated_at, ttl_ms,
      poll_interval_ms, expires_at, replay_after_crash, client_caps, runnable, sealed, idempotency_key, fair_at,
      placed_at, tool_version, created_message, concurrency_key, concurrency_limit, concurrency_hold, priority,
      rate_key, rate_limit, rate_period_ms, debounce_key, wake_at, trace_parent, trace_state,
      parent_id, detached)
    VALUES (@id, @tenant, @principal, @tool, @args, 'working', @statusMessage, @now, @now, @ttlMs, @pollIntervalMs,
      @expiresAt, @replay, @caps, @wakeAt IS NULL, @sealed, @key, ${FAIR_PLACE}, @now, @toolVersion,
      coalesce(@statusMessage, ''), @concurrencyKey, @concurrencyLimit, @concurrencyHold, @priority, @rateKey,
      @rateLimit, @ratePeriodMs, @debounceKey, @wakeAt, @traceParent, @traceState,
      @parentId, @detached)
    ON CONFLICT (idempotency_key, tenant, principal, tool) WHERE idempotency_key IS NOT NULL DO NOTHING`);
  const keyed = db.prepare(
    `SELECT id, args, expires_at AS expiresAt FROM tasks
     WHERE tenant = ? AND principal = ? AND tool = ? AND idempotency_key = ?`,
  );
  const releaseKey = db.prepare(`UPDATE tasks SET idempotency_key = NULL WHERE id = ?`);
  // Debounce keys (migration 26, ../../core/debounce.ts).
  const debounceHolder = db.prepare(
    `SELECT * FROM tasks WHERE tenant = ? AND principal = ? AND tool = ? AND debounce_key = ?`,
  );
  const releaseDebounce = db.prepare(`UPDATE tasks SET debounce_key = NULL WHERE id = ?`);
  // Inside the write transaction that found the holder pending: no claim comes between.
  const replaceArgs = db.prepare(
    `UPDATE tasks SET args = @args, status_message = @statusMessage, updated_at = max(updated_at, @now)
     WHERE id = @id AND debounce_key IS NOT NULL AND attempt = 0 AND wake_at > @now AND status = 'working'`,
  );
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
        detached: row.detached ? 1 : null,
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
    debounceHolder: (owner: TaskOwner, tool: string, key: string) =>
      debounceHolder.get(owner.tenant, owner.principal, tool, key) as DebounceHolder | undefined,
    releaseDebounce: (id: string) => releaseDebounce.run(id),
    /** The pending task's new arguments and status message (both as kept); false if it is no longer pending. */
    replaceArgs: (id: string, args: string, statusMessage: string, now: number) =>
      replaceArgs.run({ id, args, statusMessage, now }).changes === 1,
    isSealed: (id: string) => isSealed.get(id) === 1,
    ownerBytes: (owner: TaskOwner) => ownerBytes.get(owner.tenant, owner.principal) as number,
  };
}
