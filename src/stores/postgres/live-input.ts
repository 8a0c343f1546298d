// Input a run asks for while it stays live (LiveInputPort) on PostgreSQL: one statement per operation (sql/live-input.ts).
import type { LiveInputPort } from '../../tasks/store.js';
import { LIVE_INPUT_LAPSED_MESSAGE, type JsonObject } from '../../tasks/task.js';
import { sealedAt, statusFor } from '../payload-sealing.js';
import type { StoreContext } from './context.js';

export function postgresLiveInput({ db, q, codec, feed }: StoreContext): LiveInputPort {
  const changed = (taskId: string, runnable = false) =>
    feed.emitLocal([{ taskId, runnable, cancelRequested: false }]);
  return {
    async ask(id, token, requests, statusMessage, now) {
      const seal = await codec.sealerOf(id);
      const keys = Object.keys(requests);
      const sealed = keys.map((k) =>
        seal(JSON.stringify(requests[k]), sealedAt('task_inputs.request', id, k)),
      );
      const params = [id, token, statusFor(seal, id, statusMessage), now, keys, sealed];
      const rows = await db.query(q.liveAsk, params);
      if (rows.length === 0) return false;
      changed(id);
      return true;
    },

    async answers(id, token, keys) {
      const [row] = await db.query<{ answers: [string, string][] }>(q.liveAnswers, [id, token, keys]);
      if (row === undefined) return undefined;
      const out: Record<string, JsonObject> = {};
      for (const [key, answer] of row.answers)
        out[key] = JSON.parse(codec.open(answer, sealedAt('task_inputs.answer', id, key))) as JsonObject;
      return out;
    },

    async end(id, token, statusMessage, now) {
      const seal = await codec.sealerOf(id);
      const rows = await db.query<{ notified: unknown }>(q.liveEnd, [
        id,
        token,
        statusFor(seal, id, statusMessage),
        now,
      ]);
      if (rows.length === 0) return false;
      if (rows[0]?.notified !== null) changed(id);
      return true;
    },

    async revive(now, max) {
      // Not sealed: a fixed text that says nothing of the task.
      const rows = await db.query<{ id: string }>(q.liveRevive, [now, max, LIVE_INPUT_LAPSED_MESSAGE]);
      for (const r of rows) changed(r.id, true);
      return rows.length;
    },
  };
}
