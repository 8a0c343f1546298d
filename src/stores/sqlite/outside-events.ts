// Events from outside a task on SQLite (OutsideEventPort): each delivery and each wait is one write transaction that
// reads the task's row of the event and changes it; a delivery to a waiting task wakes it in the same transaction.
import type { OutsideEventPort } from '../../tasks/events.js';
import {
  deliveryStep,
  eventPayloadAt,
  openedEventRow,
  waitStep,
  type EventRow,
} from '../core/outside-events.js';
import type { StoreContext } from './context.js';

export function sqliteOutsideEvents(ctx: StoreContext): OutsideEventPort {
  const { q, log, writes, codec } = ctx;
  const opened = (id: string, name: string): EventRow | undefined =>
    openedEventRow(q.eventRow(id, name), codec.open, id, name);
  return {
    async deliver(d, now) {
      return writes.tx(() => {
        const step = deliveryStep(
          d,
          q.eventTask(d.taskId),
          opened(d.taskId, d.name),
          () => q.keptEvents(d.taskId),
          now,
        );
        if (step.write === 'none') return step.result;
        const p = {
          id: d.taskId,
          name: d.name,
          payload: codec.seal(d.taskId, d.json, eventPayloadAt(d.taskId, d.name)),
          hash: step.hash,
          bytes: Buffer.byteLength(d.json),
          now,
        };
        if (step.write === 'keep') {
          q.keepEvent(p);
          return { ok: true, outcome: 'kept' } as const;
        }
        q.arriveEvent({ ...p, checked: step.checked ? 1 : 0 });
        if (q.wakeForEvent(d.taskId, now))
          log.changed({ taskId: d.taskId, runnable: true, cancelRequested: false, wakeAt: now });
        return { ok: true, outcome: 'delivered' } as const;
      });
    },

    async wait(id, token, name, wait, now) {
      return writes.tx(() => {
        if (!q.runHolds(id, token)) return undefined;
        const step = waitStep(opened(id, name), wait.until, now);
        if (step.write === 'register') {
          const schema = wait.schema === undefined ? null : JSON.stringify(wait.schema);
          q.registerEventWait({ id, name, schema, until: wait.until, now });
        } else if (step.write === 'read') q.setEventState(id, name, 'read');
        else if (step.write === 'time_out') q.setEventState(id, name, 'timed_out');
        return step.answer;
      });
    },
  };
}
