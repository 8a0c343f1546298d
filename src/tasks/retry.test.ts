// The wait between a step's attempts: finite and within its bounds at any attempt count.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_POLICY,
  resolveRetryPolicy,
  RETRY_FLOOR_AFTER,
  RETRY_FLOOR_MS,
  retryDelay,
  type RetryPolicy,
} from './retry.js';

const policy = (p: RetryPolicy) => resolveRetryPolicy({ maxAttempts: Infinity, jitter: 0, ...p });

describe('retryDelay', () => {
  it('grows from the initial delay by the factor up to the cap, at any attempt count', () => {
    const p = policy({});
    expect([1, 2, 3, 7, 1_024, 1_025, 1e6].map((n) => retryDelay(p, n, 0))).toEqual([
      1_000, 2_000, 4_000, 60_000, 60_000, 60_000, 60_000,
    ]);
    // A factor whose power passes what a number holds is the cap too.
    expect(retryDelay(policy({ backoffFactor: 1e300 }), 3, 0)).toBe(60_000);
  });

  it('waits nothing before the 100th attempt when the initial delay is 0, then at least a second', () => {
    const p = policy({ initialDelayMs: 0 });
    for (const n of [1, 2, RETRY_FLOOR_AFTER - 1]) expect(retryDelay(p, n, 0.5)).toBe(0);
    // Before, 0 × 2^1024 (Infinity) made the wait NaN after about 1,024 attempts, and the task ended on it.
    for (const n of [RETRY_FLOOR_AFTER, 1_024, 1_100, 1e6])
      expect(retryDelay(p, n, 0.5)).toBe(RETRY_FLOOR_MS);
  });

  it('keeps the floor under an explicit lower cap, and any constant wait above it', () => {
    expect(retryDelay(policy({ initialDelayMs: 0, maxDelayMs: 0 }), 1e6, 0)).toBe(0);
    expect(retryDelay(policy({ initialDelayMs: 0, maxDelayMs: 250 }), 1e6, 0)).toBe(250);
    expect(retryDelay(policy({ initialDelayMs: 5_000, backoffFactor: 1 }), 1e6, 0)).toBe(5_000);
  });

  it('takes a random fraction of up to `jitter` off each wait, never below the floor', () => {
    const p = resolveRetryPolicy({ jitter: 0.2 });
    expect(retryDelay(p, 1, 0)).toBe(1_000);
    expect(retryDelay(p, 1, 0.5)).toBe(900);
    expect(retryDelay(p, 1e6, 0.999)).toBe(48_012);
    expect(retryDelay(resolveRetryPolicy({ initialDelayMs: 1, jitter: 1 }), 1_000, 0.999)).toBe(1_000);
  });

  it('is a whole number of ms within [0, maxDelayMs] for any count and draw', () => {
    const policies = [DEFAULT_RETRY_POLICY, policy({ initialDelayMs: 0 }), policy({ backoffFactor: 10 })];
    for (const p of policies)
      for (const n of [1, 50, 1_023, 1_024, 1_025, 2 ** 31, 1e6, Number.MAX_SAFE_INTEGER])
        for (const r of [0, 0.3, 0.999_999]) {
          const d = retryDelay(p, n, r);
          expect(Number.isInteger(d) && d >= 0 && d <= p.maxDelayMs, `attempt ${n}, draw ${r}: ${d}`).toBe(
            true,
          );
        }
  });
});
