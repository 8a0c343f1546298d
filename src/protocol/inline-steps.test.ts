// Sleeps within a request: as long as asked, even past the longest delay one timer takes, and cut by the signal.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sleepInline } from './inline-steps.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('sleepInline', () => {
  it('waits past the longest delay of one timer (2^31 - 1 ms) instead of firing at once', async () => {
    vi.useFakeTimers();
    let done = false;
    const sleeping = sleepInline(3_000_000_000, new AbortController().signal).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(2 ** 31);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(3_000_000_000 - 2 ** 31 - 1_000);
    await sleeping;
    expect(done).toBe(true);
  });

  it('rejects with the signal reason when aborted, before or during the wait', async () => {
    const aborted = new AbortController();
    aborted.abort(new Error('gone'));
    await expect(sleepInline(10, aborted.signal)).rejects.toThrow('gone');
    const later = new AbortController();
    const sleeping = sleepInline(60_000, later.signal);
    later.abort(new Error('cancelled'));
    await expect(sleeping).rejects.toThrow('cancelled');
  });
});
