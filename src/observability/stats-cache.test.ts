// The stats cache: one store read per interval on an injected clock, shared by concurrent callers, failures absorbed.
import { describe, expect, it } from 'vitest';
import type { TaskStats } from '../tasks/store.js';
import { createStatsCache } from './stats-cache.js';

const T0 = 1_700_000_000_000;
const statsOf = (working: number): TaskStats => ({
  byStatus: { working, input_required: 0, completed: 0, failed: 0, cancelled: 0 },
  runnable: working,
});

/** A store read that counts its calls and answers with `next` (or fails when `next` is an Error). */
const fakeRead = () => {
  const calls: number[] = [];
  let next: TaskStats | Error = statsOf(1);
  const read = async (now: number): Promise<TaskStats> => {
    calls.push(now);
    await Promise.resolve();
    if (next instanceof Error) throw next;
    return next;
  };
  return { calls, read, answer: (value: TaskStats | Error) => (next = value) };
};

describe('stats cache', () => {
  it('reads the store at most once per interval and shows the last read in between', async () => {
    const store = fakeRead();
    let now = T0;
    const cache = createStatsCache(store.read, 5_000, () => now);
    expect(await cache.get()).toEqual(statsOf(1));
    store.answer(statsOf(2));
    now = T0 + 4_999;
    expect(await cache.get()).toEqual(statsOf(1));
    expect(store.calls).toEqual([T0]);
    now = T0 + 5_000;
    expect(await cache.get()).toEqual(statsOf(2));
    expect(store.calls).toEqual([T0, T0 + 5_000]);
    // A clock that jumps back does not freeze the counts until it catches up.
    store.answer(statsOf(3));
    now = T0 - 60_000;
    expect(await cache.get()).toEqual(statsOf(3));
    expect(store.calls).toEqual([T0, T0 + 5_000, T0 - 60_000]);
  });

  it('shares one read among concurrent callers, also with a zero interval', async () => {
    const store = fakeRead();
    const cache = createStatsCache(store.read, 0, () => T0);
    const all = await Promise.all([cache.get(), cache.get(), cache.get()]);
    expect(all).toEqual([statsOf(1), statsOf(1), statsOf(1)]);
    expect(store.calls).toHaveLength(1);
    // With a zero interval, the next caller after the read reads again.
    store.answer(statsOf(4));
    expect(await cache.get()).toEqual(statsOf(4));
    expect(store.calls).toHaveLength(2);
  });

  it('keeps the last good stats when a read fails, and never rejects', async () => {
    const store = fakeRead();
    let now = T0;
    const cache = createStatsCache(store.read, 1_000, () => now);
    store.answer(new Error('store unreachable'));
    await expect(cache.get()).resolves.toBeUndefined();
    now += 1_000;
    store.answer(statsOf(5));
    expect(await cache.get()).toEqual(statsOf(5));
    now += 1_000;
    store.answer(new Error('store unreachable'));
    expect(await cache.get()).toEqual(statsOf(5));
    // The failed read counts as a read: the next one waits for the interval too.
    now += 999;
    expect(await cache.get()).toEqual(statsOf(5));
    expect(store.calls).toHaveLength(3);
  });
});
