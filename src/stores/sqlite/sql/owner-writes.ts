// Prepared SQL of the SQLite task store. The owner's writes: answers and cancellation.
import type { PayloadCodec } from '../codec.js';
import type { SqliteDatabase } from '../database.js';
import { NON_TERMINAL } from './conditions.js';
import { sealedAt } from '../../payload-sealing.js';

export function prepareOwnerWriteQueries(db: SqliteDatabase, codec: PayloadCodec) {
  const answerInput = db.prepare(`
    UPDATE task_inputs SET answer = ?, answered_at = ? WHERE task_id = ? AND key = ? AND answer IS NULL AND superseded = 0`);
  const touchAfterAnswer = db.prepare(`
    UPDATE tasks SET updated_at = ?,
      status = CASE WHEN ? THEN 'working' ELSE status END,
      runnable = CASE WHEN ? THEN 1 ELSE runnable END
    WHERE id = ?`);
  const flagCancel = db.prepare(`UPDATE tasks SET cancel_requested = 1 WHERE id = ?`);
  const cancelNow = db.prepare(`
    UPDATE tasks SET status = 'cancelled', cancel_requested = 1, runnable = 0, lease_owner = NULL, lease_until = NULL,
      wake_at = NULL, status_message = 'Task was cancelled.', updated_at = ? WHERE id = ? AND ${NON_TERMINAL}`);
  return {
    answerInput: (id: string, key: string, value: string, now: number) =>
      answerInput.run(codec.seal(id, value, sealedAt('task_inputs.answer', id, key)), now, id, key).changes,
    touchAfterAnswer: (id: string, resumed: boolean, now: number) =>
      touchAfterAnswer.run(now, resumed ? 1 : 0, resumed ? 1 : 0, id),
    flagCancel: (id: string) => flagCancel.run(id),
    cancelNow: (id: string, now: number) => cancelNow.run(now, id),
  };
}
