// The memory of finished tasks against reads that race a change: what a read found is remembered only when no change
// of the task, and no gap in the feed, was heard while it was under way.
import { describe, expect, it } from 'vitest';
import type { TaskChange } from '../../tasks/store.js';
import type { TaskSnapshot } from '../../tasks/task.js';
import type { StoreChangeFeed } from './change-feed.js';
import { finishedTasks } from './finished-tasks.js';

const T0 = 1_700_000_000_000;
const ALICE = { tenant: 'acme', principal: 'alice' };

/** A feed the test drives: its changes, its resyncs and whether it listens. */
function fakeFeed() {
  const listeners: ((c: TaskChange) => void)[] = [];
  const resyncs: (() => void)[] = [];
  const state = { live: true, subscriptions: 0 };
  const feed: StoreChangeFeed = {
    changes: {
      subscribe(fn, onResync) {
        state.subscriptions += 1;
        listeners.push(fn);
        if (onResync !== undefined) resyncs.push(onResync);
        return () => undefined;
      },
    },
    emitLocal: (changes) => changes.forEach((c) => listeners.forEach((fn) => fn(c))),
    listening: () => state.live,
    close: async () => undefined,
  };
  const change = (taskId: string) => feed.emitLocal([{ taskId, runnable: false, cancelRequested: false }]);
  const resync = () => resyncs.forEach((fn) => fn());
  return { feed, state, change, resync };
}

const snapshot = (id: string, status: TaskSnapshot['status'] = 'completed'): TaskSnapshot => ({
  id,
  status,
  statusMessage: undefined,
  createdAt: T0,
  updatedAt: T0,
  ttlMs: null,
  pollIntervalMs: undefined,
  inputRequests: {},
  result: status === 'completed' ? { n: 1 } : undefined,
  error: undefined,
});

describe('finished tasks and racing reads', () => {
  it('remembers a finished task read in quiet, not a working one, and subscribes once, at the first read', () => {
    const { feed, state } = fakeFeed();
    const finished = finishedTasks(feed);
    expect(state.subscriptions).toBe(0);
    finished.found(ALICE, snapshot('w', 'working'), finished.mark());
    finished.found(ALICE, snapshot('t'), finished.mark());
    expect(state.subscriptions).toBe(1);
    expect(finished.get('w', ALICE, T0)).toBeUndefined();
    expect(finished.get('t', ALICE, T0)).toMatchObject({ id: 't' });
  });

  it('does not remember what a read found when the task changed while it was under way', () => {
    const { feed, change } = fakeFeed();
    const finished = finishedTasks(feed);
    const first = finished.mark();
    const second = finished.mark();
    change('t');
    finished.found(ALICE, snapshot('t'), first);
    finished.found(ALICE, snapshot('t'), second);
    expect(finished.get('t', ALICE, T0)).toBeUndefined();
    // A change of another task does not count; a read begun after the change does.
    const third = finished.mark();
    change('other');
    finished.found(ALICE, snapshot('t'), third);
    expect(finished.get('t', ALICE, T0)).toMatchObject({ id: 't' });
    // A change heard later lets go of it.
    change('t');
    expect(finished.get('t', ALICE, T0)).toBeUndefined();
  });

  it('counts a read as raced when more changes were heard meanwhile than it keeps', () => {
    const { feed, change } = fakeFeed();
    const finished = finishedTasks(feed);
    const mark = finished.mark();
    for (let i = 0; i < 1_024; i++) change(`other-${i}`);
    finished.found(ALICE, snapshot('t'), mark);
    expect(finished.get('t', ALICE, T0)).toMatchObject({ id: 't' });
    const older = finished.mark();
    for (let i = 0; i < 1_025; i++) change(`other-${i}`);
    finished.found(ALICE, snapshot('u'), older);
    expect(finished.get('u', ALICE, T0)).toBeUndefined();
  });

  it('neither remembers nor answers while the feed is not listening, and lets go of all on a resync', () => {
    const { feed, state, resync } = fakeFeed();
    const finished = finishedTasks(feed);
    finished.found(ALICE, snapshot('a'), finished.mark());
    state.live = false;
    expect(finished.get('a', ALICE, T0)).toBeUndefined();
    finished.found(ALICE, snapshot('b'), finished.mark());
    state.live = true;
    expect(finished.get('b', ALICE, T0)).toBeUndefined();
    // A read that spans a resync (changes may have gone unheard) is not remembered; what was remembered is gone.
    expect(finished.get('a', ALICE, T0)).toMatchObject({ id: 'a' });
    const spanning = finished.mark();
    resync();
    finished.found(ALICE, snapshot('c'), spanning);
    expect(finished.get('c', ALICE, T0)).toBeUndefined();
    expect(finished.get('a', ALICE, T0)).toBeUndefined();
  });
});
