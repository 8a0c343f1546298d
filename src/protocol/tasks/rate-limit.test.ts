import { describe, expect, it } from 'vitest';
import { createRateLimiter } from './rate-limit.js';

describe('createRateLimiter', () => {
  it('allows a burst, then one request per interval, per key', () => {
    const limiter = createRateLimiter(10, 3);
    expect([0, 1, 2].map(() => limiter.take('a', 1000))).toEqual([0, 0, 0]);
    expect(limiter.take('a', 1000)).toBe(100);
    expect(limiter.take('b', 1000)).toBe(0);
    expect(limiter.take('a', 1100)).toBe(0);
    expect(limiter.take('a', 1100)).toBeGreaterThan(0);
  });
  it('keeps memory bounded', () => {
    const limiter = createRateLimiter(1, 1, 2);
    limiter.take('a', 0);
    limiter.take('b', 0);
    limiter.take('c', 0); // evicts a
    expect(limiter.take('a', 0)).toBe(0);
  });
});
