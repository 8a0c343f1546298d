// The per-client token buckets of the callback route: a burst, then the average rate, each client on its own.
import { describe, expect, it } from 'vitest';
import { createClientBuckets } from './buckets.js';

describe('client buckets', () => {
  it('let a burst through, then one request per token refilled, each client apart', () => {
    const buckets = createClientBuckets(2, 3);
    for (let i = 0; i < 3; i++) expect(buckets.take('a', 0)).toBeUndefined();
    expect(buckets.take('a', 0)).toBe(500);
    expect(buckets.take('b', 0)).toBeUndefined();
    expect(buckets.take('a', 500)).toBeUndefined();
    expect(buckets.take('a', 500)).toBe(500);
  });
});
