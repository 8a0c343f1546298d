// The memory of finished tasks both stores answer polls from: owner-checked, expiring, bounded by count and bytes.
import { describe, expect, it } from 'vitest';
import type { TaskSnapshot } from '../../tasks/task.js';
import { createTerminalCache, sizeAtMost } from './terminal-cache.js';

const T0 = 1_700_000_000_000;
const ALICE = { tenant: 'acme', principal: 'alice' };
const BOB = { tenant: 'acme', principal: 'bob' };

const finished = (id: string, text = 'done', ttlMs: number | null = 60_000): TaskSnapshot => ({
  id,
  status: 'completed',
  statusMessage: undefined,
  createdAt: T0,
  updatedAt: T0,
  ttlMs,
  pollIntervalMs: undefined,
  inputRequests: {},
  result: { content: [{ type: 'text', text }] },
  error: undefined,
});

describe('the memory of finished tasks', () => {
  it('answers the owner only, until the task expires', () => {
    const cache = createTerminalCache();
    const task = finished('t1');
    cache.remember(ALICE, task);
    expect(cache.get('t1', ALICE, T0 + 1)).toBe(task);
    expect(cache.get('t1', BOB, T0 + 1)).toBeUndefined();
    expect(cache.get('t1', { tenant: 'globex', principal: 'alice' }, T0 + 1)).toBeUndefined();
    expect(cache.get('t1', ALICE, T0 + 60_000)).toBeUndefined();
    // Gone once seen expired, even for a clock that went back.
    expect(cache.get('t1', ALICE, T0 + 1)).toBeUndefined();
    cache.remember(ALICE, finished('t2', 'kept', null));
    expect(cache.get('t2', ALICE, T0 + 1e12)).toBeDefined();
  });

  it('forgets one task, the expired ones, or all', () => {
    const cache = createTerminalCache();
    cache.remember(ALICE, finished('a'));
    cache.remember(ALICE, finished('b', 'x', 10));
    cache.remember(ALICE, finished('c'));
    cache.forget('a');
    expect(cache.get('a', ALICE, T0)).toBeUndefined();
    cache.forgetExpired(T0 + 10);
    expect(cache.get('b', ALICE, T0)).toBeUndefined();
    expect(cache.get('c', ALICE, T0)).toBeDefined();
    cache.clear();
    expect(cache.get('c', ALICE, T0)).toBeUndefined();
  });

  it('keeps at most its count of tasks, letting go of the oldest', () => {
    const cache = createTerminalCache({ tasks: 3 });
    for (const id of ['a', 'b', 'c', 'd']) cache.remember(ALICE, finished(id));
    expect(['a', 'b', 'c', 'd'].map((id) => cache.get(id, ALICE, T0) !== undefined)).toEqual([
      false,
      true,
      true,
      true,
    ]);
  });

  it('keeps no task larger than its share, and at most its bytes in all', () => {
    const cache = createTerminalCache({ bytes: 10_000, taskBytes: 4_000 });
    cache.remember(ALICE, finished('big', 'x'.repeat(3_000)));
    expect(cache.get('big', ALICE, T0)).toBeUndefined();
    // Three of about 2.3 kB fit in 10 kB; a fourth and fifth push out the oldest.
    for (const id of ['a', 'b', 'c', 'd', 'e']) cache.remember(ALICE, finished(id, 'y'.repeat(1_000)));
    const kept = ['a', 'b', 'c', 'd', 'e'].filter((id) => cache.get(id, ALICE, T0) !== undefined);
    expect(kept.length).toBeGreaterThanOrEqual(3);
    expect(kept).toEqual(['a', 'b', 'c', 'd', 'e'].slice(5 - kept.length));
    // Remembering a task again replaces it, not adds it.
    for (let i = 0; i < 10; i++) cache.remember(ALICE, finished('e', 'y'.repeat(1_000)));
    expect(['a', 'b', 'c', 'd', 'e'].filter((id) => cache.get(id, ALICE, T0) !== undefined)).toEqual(kept);
  });

  it('sizes a value without walking past its cap', () => {
    // Object 16, keys 10 + 10, 'xy' 12, array 16 with 3 slots of 8, three values of 8.
    expect(sizeAtMost({ a: 'xy', b: [1, true, null] }, 1_000)).toBe(112);
    expect(sizeAtMost({ a: 'xy', b: [1, true, null] }, 111)).toBeUndefined();
    // Past the cap at the large string (walked first): the values after it are never read.
    const trap = {
      get boom(): never {
        throw new Error('walked past the cap');
      },
    };
    expect(sizeAtMost([trap, trap, 'x'.repeat(20_000)], 10_000)).toBeUndefined();
    expect(
      sizeAtMost(
        Array.from({ length: 100_000 }, () => trap),
        10_000,
      ),
    ).toBeUndefined();
  });
});
