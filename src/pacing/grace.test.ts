import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { settleOrAbort, settlesWithin } from './grace.js';

/** A promise and the hands that settle it. */
function pending(): { work: Promise<void>; resolve: () => void; reject: (err: Error) => void } {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const work = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { work, resolve, reject };
}

describe('bounded waits', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('settlesWithin: true for work that resolves or rejects in time, false past the bound, no timer left', async () => {
    const ok = pending();
    const inTime = settlesWithin(ok.work, 100);
    await vi.advanceTimersByTimeAsync(50);
    ok.resolve();
    await expect(inTime).resolves.toBe(true);

    const failing = pending();
    const failed = settlesWithin(failing.work, 100);
    failing.reject(new Error('boom'));
    await expect(failed).resolves.toBe(true);

    const late = pending();
    const tooLate = settlesWithin(late.work, 100);
    await vi.advanceTimersByTimeAsync(99);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await expect(tooLate).resolves.toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('settleOrAbort: no abort when the work ends within the grace', async () => {
    const w = pending();
    const abort = vi.fn();
    const done = settleOrAbort(w.work, 1_000, abort);
    await vi.advanceTimersByTimeAsync(999);
    w.resolve();
    await expect(done).resolves.toBe(true);
    expect(abort).not.toHaveBeenCalled();
  });

  it('settleOrAbort: aborts once the grace is over, then waits for the work for as long as it takes', async () => {
    const w = pending();
    const abort = vi.fn();
    let ended = false;
    const done = settleOrAbort(w.work, 1_000, abort).then((v) => ((ended = true), v));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(abort).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(ended).toBe(false);
    w.resolve();
    await expect(done).resolves.toBe(true);
  });

  it('settleOrAbort: with a bound after the abort, gives up on work that ignores it', async () => {
    const w = pending();
    const abort = vi.fn();
    const done = settleOrAbort(w.work, 1_000, abort, 500);
    await vi.advanceTimersByTimeAsync(1_499);
    expect(abort).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    await expect(done).resolves.toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });
});
