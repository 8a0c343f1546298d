// The shared heartbeat of a worker's runs: one timer and one subscriber for all of them, while any is held.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TaskStore } from '../tasks/store.js';
import { drivenChangeFeed } from '../../test/support/change-feed.js';
import { createLeaseKeeper, type HeldLease } from './lease-keeper.js';

const counted = (taskId: string): HeldLease & { count: number } => {
  const lease = { taskId, count: 0, renew: () => void lease.count++ };
  return lease;
};

describe('createLeaseKeeper', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('renews every held lease each period, with one timer and one subscriber for all', () => {
    const feed = drivenChangeFeed();
    const keeper = createLeaseKeeper({ changes: feed.changes } as TaskStore, 100);
    const leases = Array.from({ length: 50 }, (_, i) => counted(`t${i}`));
    const releases = leases.map((lease) => keeper.hold(lease));
    expect(vi.getTimerCount()).toBe(1);
    expect(feed.size()).toBe(1);
    vi.advanceTimersByTime(250);
    expect(leases.map((l) => l.count)).toEqual(leases.map(() => 2));
    releases.slice(1).forEach((release) => release());
    vi.advanceTimersByTime(100);
    expect(leases[0]!.count).toBe(3);
    expect(leases[1]!.count).toBe(2);
    releases[0]!();
    expect(vi.getTimerCount()).toBe(0);
    expect(feed.size()).toBe(0);
  });

  it("renews at once only the lease of a task a change says is cancelled, including a task's second run", () => {
    const feed = drivenChangeFeed();
    const keeper = createLeaseKeeper({ changes: feed.changes } as TaskStore, 1_000);
    const a = counted('a');
    const b = counted('b');
    const again = counted('a');
    keeper.hold(a);
    keeper.hold(b);
    const releaseAgain = keeper.hold(again);
    feed.emit({ taskId: 'a', runnable: false, cancelRequested: true });
    feed.emit({ taskId: 'b', runnable: true, cancelRequested: false });
    expect([a.count, b.count, again.count]).toEqual([1, 0, 1]);
    releaseAgain();
    releaseAgain();
    feed.emit({ taskId: 'a', runnable: false, cancelRequested: true });
    expect([a.count, again.count]).toEqual([2, 1]);
  });

  it('works without a change feed, and starts again after every lease was released', () => {
    const keeper = createLeaseKeeper({} as TaskStore, 50);
    const first = counted('x');
    keeper.hold(first)();
    expect(vi.getTimerCount()).toBe(0);
    const second = counted('y');
    keeper.hold(second);
    vi.advanceTimersByTime(50);
    expect([first.count, second.count]).toEqual([0, 1]);
  });
});
