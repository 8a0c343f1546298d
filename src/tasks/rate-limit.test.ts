import { describe, expect, it } from 'vitest';
import {
  MAX_RATE_PERIOD_MS,
  rateInterval,
  rateLimitOf,
  rateLimitProblem,
  ratePolicyProblem,
  reserveStart,
} from './rate-limit.js';

describe('rate limits', () => {
  it('default the key to the tool and keep the limit and period', () => {
    expect(rateLimitOf('charge', { limit: 10, periodMs: 1_000 })).toEqual({
      key: 'charge',
      limit: 10,
      periodMs: 1_000,
    });
    expect(rateLimitOf('charge', { limit: 10, periodMs: 1_000, key: 'stripe' })).toMatchObject({
      key: 'stripe',
    });
    expect(rateLimitOf('charge', undefined)).toBeUndefined();
  });

  it('refuse limits and periods that are not whole numbers in range, and keys that are empty, long or unprintable', () => {
    expect(rateLimitProblem(10, 1_000, 'stripe')).toBeUndefined();
    for (const limit of [0, -1, 1.5, Number.NaN, Infinity, 1_000_001])
      expect(rateLimitProblem(limit, 1_000, 'k')).toMatch(/^limit must be a whole number from 1/);
    for (const period of [0, -1, 0.5, Number.NaN, Infinity, MAX_RATE_PERIOD_MS + 1])
      expect(rateLimitProblem(1, period, 'k')).toMatch(/^periodMs must be a whole number of ms from 1/);
    for (const key of ['', 'x'.repeat(201), 'a\nb', 'a\u202eb'])
      expect(rateLimitProblem(1, 1_000, key)).toMatch(/^key/);
    expect(ratePolicyProblem('charge', { limit: 1, periodMs: 0 })).toMatch(/^periodMs/);
    expect(ratePolicyProblem('charge', { limit: 1, periodMs: 1, key: () => '' })).toBeUndefined();
  });

  it('compute a key from the call, marked derived, and check it like a static one', () => {
    const perCustomer = { limit: 2, periodMs: 1_000, key: (args: { c?: unknown }) => `c/${String(args.c)}` };
    expect(rateLimitOf('charge', perCustomer, { args: { c: 42 }, owner: {} })).toEqual({
      key: 'c/42',
      limit: 2,
      periodMs: 1_000,
      derived: true,
    });
    expect(() => rateLimitOf('charge', perCustomer, { args: { c: 'x'.repeat(300) }, owner: {} })).toThrow(
      /^tool "charge": task.rateLimit: the computed key must be/,
    );
  });

  it('space starts evenly: one every periodMs / limit, a start in the past counting from now', () => {
    const interval = rateInterval({ limit: 4, periodMs: 1_000 });
    expect(interval).toBe(250);
    let tat: number | undefined;
    const starts: number[] = [];
    for (let i = 0; i < 4; i++) {
      const next = reserveStart(tat, 10_000, interval);
      starts.push(next.startAt);
      tat = next.tat;
    }
    expect(starts).toEqual([10_000, 10_250, 10_500, 10_750]);
    // Idle for a while: the key's time is past, and the next start is now.
    expect(reserveStart(tat, 20_000, interval)).toEqual({ startAt: 20_000, tat: 20_250 });
  });
});
