// The sweeps: tasks past their TTL fail (subscribers hear it), and expired tasks are deleted after a grace period;
// one-time keys are recorded here and deleted once they expire.
import type { TaskStore } from '../../tasks/store.js';
import { TASK_EXPIRED_ERROR } from '../../tasks/errors.js';
import type { StoreContext } from './context.js';
import type { TerminalCache } from '../core/terminal-cache.js';
import { childEnded } from './children.js';
import { SWEEP_CHUNK } from './sql/sweeps.js';

const EXPIRED_ERROR = JSON.stringify(TASK_EXPIRED_ERROR);

/** Runs `chunk` (one statement of at most SWEEP_CHUNK rows) until it comes back short; the rows in all. */
async function inChunks(chunk: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await chunk();
    total += n;
    if (n < SWEEP_CHUNK) return total;
  }
}

export function sweeps(
  ctx: StoreContext,
  terminal: TerminalCache,
): Pick<TaskStore, 'expire' | 'purge' | 'consumeOnce'> {
  const { q, log, writes } = ctx;
  return {
    async expire(now) {
      // A chunk at a time, each its own transaction: a large backlog never makes one statement (nor one
      // transaction) that holds the write lock long or journals many pages.
      return inChunks(() =>
        writes.tx(() => {
          const ids = q.expire(now, EXPIRED_ERROR);
          for (const taskId of ids) {
            log.changed({ taskId, runnable: false, cancelRequested: true });
            // A parent waiting on it learns that it ended (its parent may have expired too: then nothing).
            childEnded(ctx, taskId, now);
          }
          return ids.length;
        }),
      );
    },

    async purge(now, graceMs) {
      // Purging removes only tasks that expired; the cache never answers those (get checks the expiry), so it
      // keeps every snapshot still live and only lets go of the expired ones.
      terminal.forgetExpired(now);
      // In chunks, as expire: one-time keys first, then tasks.
      await inChunks(() => writes.immediate(() => q.purgeConsumed(now)));
      return inChunks(() => writes.immediate(() => q.purge(now - graceMs)));
    },

    async consumeOnce(key, expiresAt) {
      return writes.immediate(() => q.consume(key, expiresAt));
    },
  };
}
