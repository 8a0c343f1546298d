import { describe, expect, it } from 'vitest';
import { backoffCeilingMs, backoffMs, jitteredMs } from './backoff.js';

describe('backoffCeilingMs', () => {
  it('doubles from the first wait up to the cap', () => {
    expect([0, 1, 2, 3, 4, 5].map((n) => backoffCeilingMs(n, 100, 1_000))).toEqual([
      100, 200, 400, 800, 1_000, 1_000,
    ]);
  });

  it('grows by another factor when given one', () => {
    expect([0, 1, 2].map((n) => backoffCeilingMs(n, 10, 1_000, 3))).toEqual([10, 30, 90]);
    expect(backoffCeilingMs(50, 10, 1_000, 1)).toBe(10);
  });

  it('is the cap for any count, never NaN', () => {
    expect(backoffCeilingMs(1e6, 5, 200)).toBe(200);
    expect(backoffCeilingMs(3, 5, 200, 1e300)).toBe(200);
    expect(backoffCeilingMs(1e6, 250, Infinity)).toBe(Infinity);
  });

  it('stays 0 from a first wait of 0, and reads a negative count as the first', () => {
    expect(backoffCeilingMs(1e6, 0, 250)).toBe(0);
    expect(backoffCeilingMs(-1, 100, 1_000)).toBe(100);
  });
});

describe('jitteredMs', () => {
  it('takes up to its spread off at random', () => {
    expect(jitteredMs(1_000, 0.25, 0)).toBe(1_000);
    expect(jitteredMs(1_000, 0.25, 1)).toBe(750);
    expect(jitteredMs(1_000, 0.5, 0.5)).toBe(750);
    expect(jitteredMs(1_000, 0, 0.9)).toBe(1_000);
  });
});

describe('backoffMs', () => {
  it('is a point in the upper half of the doubled wait', () => {
    expect(backoffMs(0, 100, 1_000, () => 0)).toBe(50);
    expect(backoffMs(0, 100, 1_000, () => 1)).toBe(100);
    expect(backoffMs(2, 100, 1_000, () => 0.5)).toBe(300);
    expect(backoffMs(9, 100, 1_000, () => 1)).toBe(1_000);
    for (let i = 0; i < 100; i++) {
      const wait = backoffMs(3, 100, 10_000);
      expect(wait).toBeGreaterThanOrEqual(400);
      expect(wait).toBeLessThanOrEqual(800);
    }
  });
});
