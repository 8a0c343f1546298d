// Prepared SQL of the SQLite task store. The owner's writes: answers and cancellation.
import type { PayloadCodec } from '../codec.js';
import type { SqliteDatabase } from '../database.js';
import { RESUMED_STATUS_MESSAGE, type TaskOwner } from '../../../tasks/task.js';
import { FAIR_PLACE, NON_TERMINAL } from './conditions.js';
import { sealedAt } from '../../payload-sealing.js';

export function prepareOwnerWriteQueries(db: SqliteDatabase, codec: PayloadCodec) {
  const answerInput = db.prepare(`
    UPDATE task_inputs SET answer = ?, answered_at = ? WHERE task_id = ? AND key = ? AND answer IS NULL AND superseded = 0`);
  // A task all of whose input is answered is runnable again, at a new place in line (conditions.ts, FAIR_PLACE).
  const touchAfterAnswer = db.prepare(`
    UPDATE tasks SET updated_at = @now,
      status = CASE WHEN @resumed THEN 'working' ELSE status END,
      status_message = CASE WHEN @resumed THEN @resumedMessage ELSE status_message END,
      runnable = CASE WHEN @resumed THEN 1 ELSE runnable END,
      fair_at = CASE WHEN @resumed THEN ${FAIR_PLACE} ELSE fair_at END,
      placed_at = CASE WHEN @resumed THEN @now ELSE placed_at END
    WHERE id = @id`);
  const flagCancel = db.prepare(`UPDATE tasks SET cancel_requested = 1 WHERE id = ?`);
  const cancelNow = db.prepare(`
    UPDATE tasks SET status = 'cancelled', cancel_requested = 1, runnable = 0, lease_owner = NULL, lease_until = NULL,
      wake_at = NULL, status_message = 'Task was cancelled.', updated_at = ? WHERE id = ? AND ${NON_TERMINAL}`);
  return {
    answerInput: (id: string, key: string, value: string, now: number) =>
      answerInput.run(codec.seal(id, value, sealedAt('task_inputs.answer', id, key)), now, id, key).changes,
    touchAfterAnswer: (id: string, owner: TaskOwner, resumed: boolean, now: number) =>
      touchAfterAnswer.run({
        id,
        now,
        resumed: resumed ? 1 : 0,
        resumedMessage: RESUMED_STATUS_MESSAGE,
        tenant: owner.tenant,
        principal: owner.principal,
      }),
    flagCancel: (id: string) => flagCancel.run(id),
    cancelNow: (id: string, now: number) => cancelNow.run(now, id),
  };
}
