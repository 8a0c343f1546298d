// Reads: a task for its owner (finished ones from memory) or by its idempotency key, everything about it for
// operators, the next wake-up, and the counts (quota, metrics, backlog).
import type { StoreReads as Reads } from '../built-in.js';
import type { TaskStore } from '../../tasks/store.js';
import { isTerminal } from '../../tasks/task.js';
import { lookup, snapshotOf, type StoreContext } from './context.js';
import type { TerminalCache } from '../core/terminal-cache.js';
import { decideKey, joinedTask } from '../core/idempotency.js';
import { parkedStats, pausedStats, rateWaitStats } from '../core/parked.js';
import { toInspection } from '../core/rows.js';

/** The reads, with `getNow`: the owner's view at once when nothing it shows waits for a sync. */
export type SqliteReads = Reads & Required<Pick<TaskStore, 'getNow'>>;

/** The owner's view at once when nothing it shows waits for a sync; finished tasks are remembered once durable. */
function ownerRead(ctx: StoreContext, terminal: TerminalCache): SqliteReads['getNow'] {
  return (id, owner, now) => {
    const remembered = terminal.get(id, owner, now);
    if (remembered !== undefined) return remembered;
    const row = lookup(ctx, id, owner, now);
    if (typeof row === 'string') return row;
    const snapshot = snapshotOf(ctx, row);
    const terminated = isTerminal(row.status);
    // What the owner is shown is durable: a commit it read may still wait for its WAL sync (none waits: at once).
    const pending = ctx.writes.settled();
    if (pending === undefined) {
      if (terminated) terminal.remember(owner, snapshot);
      return snapshot;
    }
    return pending.then(() => {
      if (terminated) terminal.remember(owner, snapshot);
      return snapshot;
    });
  };
}

export function reads(ctx: StoreContext, terminal: TerminalCache): SqliteReads {
  const { q, codec } = ctx;
  const getNow = ownerRead(ctx, terminal);
  return {
    getNow,
    async get(id, owner, now) {
      return getNow(id, owner, now);
    },

    async findByIdempotencyKey(owner, tool, key, args, now) {
      const decision = decideKey(q.keyed(owner, tool, key), args, now, codec.open);
      try {
        return await joinedTask(decision, (id) => {
          const row = q.getOwned(id, owner);
          return row === undefined ? undefined : snapshotOf(ctx, row);
        });
      } finally {
        await ctx.writes.settled();
      }
    },

    async nextWakeAt(now) {
      return q.nextWake(now);
    },

    async inspect(id) {
      const row = q.inspect(id);
      if (row === undefined) return undefined;
      return toInspection(
        row,
        {
          done: q.doneSteps(id),
          attempts: q.stepAttempts(id),
          history: q.history(id, row.created_at),
          retries: q.retries(id),
          children: q.childrenOf(id),
        },
        codec.open,
      );
    },

    async countActive(owner) {
      return q.countActive(owner);
    },

    async storedBytes(owner) {
      return q.ownerBytes(owner);
    },

    async stats(now) {
      const { runnable, ...byStatus } = q.stats(now);
      return {
        byStatus,
        runnable,
        ...parkedStats(q.parkedByTool()),
        ...rateWaitStats(q.rateWaitsByTool()),
        ...pausedStats(q.pausedByTool()),
      };
    },

    async countRunnable(now) {
      return q.countRunnable(now);
    },
  };
}
