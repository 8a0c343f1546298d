// Client-made idempotency keys: UUIDv7 shape, unique, and in creation order when sorted.
import { describe, expect, it } from 'vitest';
import { newIdempotencyKey } from './idempotency-key.js';

describe('newIdempotencyKey', () => {
  it('makes unique UUIDv7 keys that sort in the order of their times', () => {
    const t0 = 1_764_600_000_000;
    const keys = Array.from({ length: 2_000 }, (_, i) => newIdempotencyKey(t0 + Math.floor(i / 10)));
    for (const key of keys)
      expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(keys).size).toBe(keys.length);
    const byTime = (k: string): number => parseInt(k.replace(/-/g, '').slice(0, 12), 16);
    expect(keys.map(byTime)).toEqual(keys.map((_, i) => t0 + Math.floor(i / 10)));
    const sorted = [...keys].sort();
    expect(sorted.map(byTime)).toEqual([...sorted.map(byTime)].sort((a, b) => a - b));
  });
});
