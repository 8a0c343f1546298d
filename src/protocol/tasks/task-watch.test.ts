// watchTask: woken by a change of its task or by a resync of the feed, not by other tasks' changes.
import { describe, expect, it } from 'vitest';
import type { TaskStore } from '../../tasks/store.js';
import { drivenChangeFeed } from '../../../test/support/change-feed.js';
import { watchTask } from './task-watch.js';

/** A store whose change feed the test drives. */
function feed() {
  const driven = drivenChangeFeed();
  const store = { changes: driven.changes } as unknown as TaskStore;
  const change = (taskId: string): void => driven.emit({ taskId, runnable: false, cancelRequested: false });
  return { store, change, resync: driven.resync, size: driven.size };
}

/** Whether the watch's next wait ends within `ms` of an action (long waits are 10 s). */
async function wokenBy(action: () => void, next: Promise<void>, ms = 1_000): Promise<boolean> {
  action();
  const timeout = new Promise<false>((r) => setTimeout(() => r(false), ms));
  return Promise.race([next.then(() => true), timeout]);
}

describe('watchTask', () => {
  it('wakes on a change of its task and on a resync, not on another task', async () => {
    const f = feed();
    const watch = watchTask(f.store, 'task_a', new AbortController().signal);
    const first = watch.next(10_000);
    expect(await wokenBy(() => f.change('task_b'), first, 200)).toBe(false);
    expect(await wokenBy(() => f.change('task_a'), first)).toBe(true);
    expect(await wokenBy(() => f.resync(), watch.next(10_000))).toBe(true);
    // A resync heard between two waits is not lost: the next wait ends at once.
    f.resync();
    expect(await wokenBy(() => undefined, watch.next(10_000), 50)).toBe(true);
    watch.stop();
    expect(f.size()).toBe(0);
  });
});
