// The sweeps: tasks past their TTL fail (subscribers hear it), and expired tasks are deleted after a grace period;
// one-time keys are recorded here and deleted once they expire.
import type { TaskStore } from '../../tasks/store.js';
import { TASK_EXPIRED_ERROR } from '../../tasks/errors.js';
import type { StoreContext } from './context.js';
import { wakeParents } from './children.js';

const EXPIRED_ERROR = JSON.stringify(TASK_EXPIRED_ERROR);

export function sweeps(ctx: StoreContext): Pick<TaskStore, 'expire' | 'purge' | 'consumeOnce'> {
  const { db, q, feed } = ctx;
  return {
    async expire(now) {
      const rows = await db.query<{ id: string }>(q.expire, [EXPIRED_ERROR, now]);
      feed.emitLocal(rows.map((r) => ({ taskId: r.id, runnable: false, cancelRequested: true })));
      // Parents waiting on these learn that they ended. After the expiry committed (a parent locked by its cancel
      // cannot hold up the sweep's locks): a process gone in between leaves the parent to its wait's bound.
      await wakeParents(
        ctx,
        rows.map((r) => r.id),
        now,
      );
      return rows.length;
    },

    async purge(now, graceMs) {
      await db.query(q.purgeConsumed, [now]);
      const [row] = await db.query<{ n: number }>(q.purge, [now - graceMs]);
      return row?.n ?? 0;
    },

    async consumeOnce(key, expiresAt) {
      const rows = await db.query(q.consume, [key, expiresAt]);
      return rows.length === 1;
    },
  };
}
