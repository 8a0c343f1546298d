// Events from outside a task on PostgreSQL (OutsideEventPort): each delivery and each wait is one transaction that
// locks the task's row of the event (or inserts it) and changes it; a delivery to a waiting task wakes it in the same
// transaction and notifies every replica. Run endings lock the task's event rows first (sql/endings.ts, wait).
import type { OutsideEventPort } from '../../tasks/events.js';
import {
  deliveryStep,
  eventPayloadAt,
  openedEventRow,
  waitStep,
  type EventRow,
  type EventTask,
} from '../core/outside-events.js';
import type { StoreContext } from './context.js';
import type { Run } from './db.js';

/** Reads of a row another transaction inserted meanwhile: one more look is enough (rows are never deleted alone). */
const TRIES = 2;

export function postgresOutsideEvents(ctx: StoreContext): OutsideEventPort {
  const { db, q, codec, feed } = ctx;
  const opened = async (run: Run, id: string, name: string): Promise<EventRow | undefined> => {
    const [row] = await run<EventRow & Record<string, unknown>>(q.eventRow, [id, name]);
    return openedEventRow(row, codec.open, id, name);
  };
  return {
    async deliver(d, now) {
      const seal = await codec.sealerOf(d.taskId);
      const payload = seal(d.json, eventPayloadAt(d.taskId, d.name));
      const bytes = Buffer.byteLength(d.json);
      let woken = false;
      const result = await db.tx(async (run) => {
        const [task] = await run<EventTask & Record<string, unknown>>(q.eventTask, [d.taskId]);
        for (let i = 0; ; i++) {
          const row = await opened(run, d.taskId, d.name);
          const [{ n } = { n: 0 }] =
            row === undefined ? await run<{ n: number }>(q.keptEvents, [d.taskId]) : [];
          const step = deliveryStep(d, task, row, () => n, now);
          if (step.write === 'none') return step.result;
          if (step.write === 'keep') {
            const [kept] = await run(q.keepEvent, [d.taskId, d.name, payload, step.hash, bytes, now]);
            if (kept !== undefined) return { ok: true, outcome: 'kept' } as const;
            if (i + 1 >= TRIES)
              throw new Error(`event "${d.name}" of task ${d.taskId} changed under the delivery`);
            continue;
          }
          await run(q.arriveEvent, [d.taskId, d.name, payload, step.hash, bytes, step.checked, now]);
          woken = (await run(q.wakeForEvent, [d.taskId, now])).length > 0;
          return { ok: true, outcome: 'delivered' } as const;
        }
      });
      if (woken) feed.emitLocal([{ taskId: d.taskId, runnable: true, cancelRequested: false, wakeAt: now }]);
      return result;
    },

    async wait(id, token, name, wait, now) {
      return db.tx(async (run) => {
        const [held] = await run(q.runHolds, [id, token]);
        if (held === undefined) return undefined;
        for (let i = 0; ; i++) {
          const step = waitStep(await opened(run, id, name), wait.until, now);
          if (step.write === 'register') {
            const schema = wait.schema === undefined ? null : JSON.stringify(wait.schema);
            const [registered] = await run(q.registerEventWait, [id, name, schema, now, wait.until]);
            if (registered !== undefined) return step.answer;
            if (i + 1 >= TRIES) throw new Error(`event "${name}" of task ${id} changed under the wait`);
            continue;
          }
          if (step.write === 'read') await run(q.setEventState, [id, name, 'read']);
          else if (step.write === 'time_out') await run(q.setEventState, [id, name, 'timed_out']);
          return step.answer;
        }
      });
    },
  };
}
