// Prepared SQL of the SQLite task store. What a run writes under its token: steps, failed step attempts and status messages.
import type { StepFailure, TaskProgress } from '../../../tasks/task.js';
import type { PayloadCodec } from '../codec.js';
import type { SqliteDatabase } from '../database.js';
import { sealedAt, sealStatus } from '../../payload-sealing.js';
import { keptProgress } from '../../shown-status.js';

export function prepareRunWriteQueries(db: SqliteDatabase, codec: PayloadCodec) {
  const holds = db.prepare(
    `SELECT 1 FROM tasks WHERE id = ? AND attempt = ? AND status = 'working' AND lease_owner IS NOT NULL`,
  );
  // seq: the order steps are done in (the lease holder writes them one at a time). A step written again under its
  // name is updated in place: the byte count's triggers see an update (a REPLACE's delete fires none).
  const putStep = db.prepare(`INSERT INTO task_steps (task_id, name, value, seq, started_at, saved_at)
    VALUES (@id, @name, @value, (SELECT coalesce(max(seq), 0) + 1 FROM task_steps WHERE task_id = @id),
      @startedAt, @savedAt)
    ON CONFLICT (task_id, name) DO UPDATE SET value = excluded.value, seq = excluded.seq,
      started_at = excluded.started_at, saved_at = excluded.saved_at`);
  // The bytes the task's owner stores (the byte quota; migration 18 keeps the count).
  const ownerBytesOf = db
    .prepare(
      `SELECT coalesce((SELECT o.bytes FROM owner_bytes o JOIN tasks t ON o.tenant = t.tenant
        AND o.principal = t.principal WHERE t.id = ?), 0)`,
    )
    .pluck();
  const putStepFailure = db.prepare(`
    INSERT INTO task_step_attempts (task_id, name, failed, last_failure, updated_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (task_id, name) DO UPDATE SET failed = excluded.failed, last_failure = excluded.last_failure,
      updated_at = excluded.updated_at`);
  // A message without progress keeps the progress shown last.
  const setMessage = db.prepare(`
    UPDATE tasks SET status_message = ?, progress = coalesce(?, progress), updated_at = ?
    WHERE id = ? AND attempt = ? AND status = 'working' AND lease_owner IS NOT NULL`);
  return {
    holds: (id: string, token: number) => holds.get(id, token) !== undefined,
    /** A step's value (JSON) as the task keeps it: sealed when the task's payloads are. */
    stepText: (id: string, name: string, json: string): string =>
      codec.seal(id, json, sealedAt('task_steps.value', id, name)),
    /** `value`: the stepText. */
    putStep: (id: string, name: string, value: string, startedAt: number | null, savedAt: number) =>
      putStep.run({ id, name, value, startedAt, savedAt }),
    ownerBytesOf: (id: string) => ownerBytesOf.get(id) as number,
    putStepFailure: (id: string, name: string, failure: StepFailure, now: number) =>
      putStepFailure.run(
        id,
        name,
        failure.attempt,
        codec.seal(id, JSON.stringify(failure), sealedAt('task_step_attempts.last_failure', id, name)),
        now,
      ),
    setStatusMessage(id: string, token: number, message: string, now: number, progress?: TaskProgress) {
      const sealed = codec.sealsTask(id);
      const kept = keptProgress((json, at) => codec.sealFor(sealed, json, at), id, progress);
      return setMessage.run(sealStatus(codec, sealed, id, message), kept, now, id, token).changes === 1;
    },
  };
}
