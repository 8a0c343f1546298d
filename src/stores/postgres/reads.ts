// Reads: a task for its owner (concurrent polls share a statement, owned-reads.ts; finished ones from memory while
// the change feed listens, finished-tasks.ts) or by its idempotency key, everything about it for operators, the
// next wake-up, and the counts (quota, metrics, backlog).
import type { TaskStats } from '../../tasks/store.js';
import type { StoreReads as Reads } from '../built-in.js';
import type { TaskStatus } from '../../tasks/task.js';
import type { StoreContext } from './context.js';
import { parkedStats, pausedStats, rateWaitStats } from '../core/parked.js';
import { missOf } from '../core/rows.js';
import { holderOf, type KeyedLookup } from './creations.js';
import { fromPacked, toInspection, toNumber, toSnapshot, type InspectRow } from './rows.js';
import { createOwnedReads } from './owned-reads.js';
import { finishedTasks } from './finished-tasks.js';
import { decideKey, joinedTask } from '../core/idempotency.js';

export function reads({ db, q, codec, feed }: StoreContext, keyed: KeyedLookup): Reads {
  const owned = createOwnedReads(db, q);
  const finished = finishedTasks(feed);
  const count = async (sql: string, params: unknown[]): Promise<number> => {
    const [row] = await db.query<{ n: number }>(sql, params);
    return row?.n ?? 0;
  };
  return {
    async get(id, owner, now) {
      const remembered = finished.get(id, owner, now);
      if (remembered !== undefined) return remembered;
      const mark = finished.mark();
      const packed = await owned(id, owner);
      const row = packed && fromPacked(packed);
      const miss = missOf(row, now);
      if (miss !== undefined || row === undefined) return miss ?? 'not_found';
      const snapshot = toSnapshot(row, codec.open);
      finished.found(owner, snapshot, mark);
      return snapshot;
    },

    async findByIdempotencyKey(owner, tool, key, args, now) {
      const row = await keyed(owner, tool, key);
      const decision = decideKey(holderOf(row), args, now, codec.open);
      return joinedTask(decision, () => row && toSnapshot(row, codec.open));
    },

    async nextWakeAt(now) {
      const [row] = await db.query<{ wake_at: string | number }>(q.nextWake, [now]);
      return row === undefined ? undefined : toNumber(row.wake_at);
    },

    async inspect(id) {
      const [row] = await db.query<InspectRow>(q.inspect, [id]);
      return row === undefined ? undefined : toInspection(row, codec.open);
    },

    countActive: (owner) => count(q.countActive, [owner.tenant, owner.principal]),

    storedBytes: async (owner) => Number(await count(q.ownerBytes, [owner.tenant, owner.principal])),

    async stats(now): Promise<TaskStats> {
      const [row] = await db.query<Record<TaskStatus | 'runnable', number>>(q.stats, [now]);
      const parked = await db.query<{ tool: string; n: number }>(q.parkedByTool);
      const rateWaits = await db.query<{ tool: string; n: number }>(q.rateWaitsByTool);
      const paused = await db.query<{ tool: string; n: number }>(q.pausedByTool);
      const n = (key: TaskStatus | 'runnable'): number => row?.[key] ?? 0;
      return {
        byStatus: {
          working: n('working'),
          input_required: n('input_required'),
          completed: n('completed'),
          failed: n('failed'),
          cancelled: n('cancelled'),
        },
        runnable: n('runnable'),
        ...parkedStats(parked),
        ...rateWaitStats(rateWaits),
        ...pausedStats(paused),
      };
    },

    countRunnable: (now) => count(q.countRunnable, [now]),
  };
}
