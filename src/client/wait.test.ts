import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { delay } from './wait.js';

describe('delay', () => {
  it('waits, and leaves no abort listener behind', async () => {
    const controller = new AbortController();
    const started = Date.now();
    for (let i = 0; i < 20; i++) await delay(1, controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
  });

  it('ends at once when the signal aborts, before or during the wait', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const waiting = delay(60_000, controller.signal);
    controller.abort();
    await waiting;
    await delay(60_000, controller.signal);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
