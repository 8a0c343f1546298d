// The sweeps: tasks past their TTL fail (subscribers hear it), and expired tasks are deleted after a grace period.
import type { TaskStore } from '../../tasks/store.js';
import { TASK_EXPIRED_ERROR } from '../../tasks/errors.js';
import type { StoreContext } from './context.js';

const EXPIRED_ERROR = JSON.stringify(TASK_EXPIRED_ERROR);

export function sweeps({ db, q, feed }: StoreContext): Pick<TaskStore, 'expire' | 'purge'> {
  return {
    async expire(now) {
      const rows = await db.query<{ id: string }>(q.expire, [EXPIRED_ERROR, now]);
      feed.emitLocal(rows.map((r) => ({ taskId: r.id, runnable: false, cancelRequested: true })));
      return rows.length;
    },

    async purge(now, graceMs) {
      const [row] = await db.query<{ n: number }>(q.purge, [now - graceMs]);
      return row?.n ?? 0;
    },
  };
}
