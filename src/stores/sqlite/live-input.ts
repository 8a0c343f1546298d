// Input a run asks for while it stays live (LiveInputPort) on SQLite: the task waits `input_required` under the run's
// lease, with `runnable` cleared so that no claim takes it (a claim does not look at the status), and is `working`
// and runnable again when the wait ends, or when a sweep finds its lease lapsed (the run's process is gone).
import type { LiveInputPort } from '../../tasks/store.js';
import { LIVE_INPUT_LAPSED_MESSAGE } from '../../tasks/task.js';
import { openAnswers } from '../core/rows.js';
import { sealedAt, sealStatus } from '../payload-sealing.js';
import type { SqliteDatabase } from './database.js';
import type { StoreContext } from './context.js';

/** The run holding `token` still has its lease, working or waiting for live input. */
const HELD = `id = @id AND attempt = @token AND status IN ('working','input_required') AND lease_owner IS NOT NULL`;

function prepareLiveInputStatements(db: SqliteDatabase) {
  return {
    ask: db.prepare(`
      UPDATE tasks SET status = 'input_required', status_message = @message, updated_at = @now, runnable = 0
      WHERE id = @id AND attempt = @token AND status = 'working' AND lease_owner IS NOT NULL`),
    put: db.prepare(
      `INSERT INTO task_inputs (task_id, key, request, asked_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (task_id, key) DO UPDATE SET superseded = 0 WHERE answer IS NULL`,
    ),
    supersedeOthers: db.prepare(
      `UPDATE task_inputs SET superseded = 1 WHERE task_id = ? AND answer IS NULL AND superseded = 0
         AND key NOT IN (SELECT value FROM json_each(?))`,
    ),
    held: db.prepare(`SELECT status FROM tasks WHERE ${HELD}`),
    answers: db.prepare(
      `SELECT key, answer FROM task_inputs WHERE task_id = ? AND answer IS NOT NULL
         AND key IN (SELECT value FROM json_each(?))`,
    ),
    end: db.prepare(`
      UPDATE tasks SET status = 'working', status_message = @message, updated_at = @now, runnable = 1
      WHERE id = @id AND attempt = @token AND status = 'input_required' AND lease_owner IS NOT NULL`),
    withdraw: db.prepare(
      `UPDATE task_inputs SET superseded = 1 WHERE task_id = ? AND answer IS NULL AND superseded = 0`,
    ),
    lapsed: db.prepare(`
      SELECT id FROM tasks INDEXED BY tasks_live_input
      WHERE status = 'input_required' AND lease_owner IS NOT NULL AND lease_until < @now
      LIMIT @max`),
    revive: db.prepare(`
      UPDATE tasks SET status = 'working', status_message = @message, updated_at = @now, runnable = 1
      WHERE id = @id AND status = 'input_required' AND lease_owner IS NOT NULL AND lease_until < @now`),
  };
}

export function sqliteLiveInput(ctx: StoreContext): LiveInputPort {
  const { db, codec, log, writes } = ctx;
  const s = prepareLiveInputStatements(db);
  const status = (id: string, text: string): string => sealStatus(codec, codec.sealsTask(id), id, text);
  const changed = (taskId: string, runnable = false) =>
    log.changed({ taskId, runnable, cancelRequested: false });
  return {
    async ask(id, token, requests, statusMessage, now) {
      return writes.tx(() => {
        const asked = s.ask.run({ id, token, now, message: status(id, statusMessage) }).changes === 1;
        if (!asked) return false;
        for (const [key, request] of Object.entries(requests))
          s.put.run(
            id,
            key,
            codec.seal(id, JSON.stringify(request), sealedAt('task_inputs.request', id, key)),
            now,
          );
        s.supersedeOthers.run(id, JSON.stringify(Object.keys(requests)));
        changed(id);
        return true;
      });
    },

    async answers(id, token, keys) {
      if (s.held.get({ id, token }) === undefined) return undefined;
      const rows = s.answers.all(id, JSON.stringify(keys)) as { key: string; answer: string }[];
      return openAnswers(
        id,
        rows.map((r) => [r.key, r.answer] as const),
        codec.open,
      );
    },

    async end(id, token, statusMessage, now) {
      return writes.tx(() => {
        const row = s.held.get({ id, token }) as { status: string } | undefined;
        if (row === undefined) return false;
        if (row.status === 'input_required') {
          s.end.run({ id, token, now, message: status(id, statusMessage) });
          changed(id);
        }
        s.withdraw.run(id);
        return true;
      });
    },

    async revive(now, max) {
      return writes.tx(() => {
        const ids = (s.lapsed.all({ now, max }) as { id: string }[]).map((r) => r.id);
        for (const id of ids) {
          s.revive.run({ id, now, message: status(id, LIVE_INPUT_LAPSED_MESSAGE) });
          s.withdraw.run(id);
          changed(id, true);
        }
        return ids.length;
      });
    },
  };
}
