import { describe, expect, it } from 'vitest';
import { concurrencyOf, concurrencyProblem, MAX_CONCURRENCY_KEY_LENGTH } from './concurrency.js';

describe('concurrency limits', () => {
  it('default the key to the tool and keep the limit', () => {
    expect(concurrencyOf('deploy', { limit: 1 })).toEqual({ key: 'deploy', limit: 1 });
    expect(concurrencyOf('pay', { limit: 25, key: 'payments' })).toEqual({ key: 'payments', limit: 25 });
    expect(concurrencyOf('pay', undefined)).toBeUndefined();
  });

  it('refuse limits that are not whole numbers from 1 and keys that are empty, long or unprintable', () => {
    expect(concurrencyProblem(2, 'payments')).toBeUndefined();
    for (const limit of [0, -1, 1.5, Number.NaN, Infinity, 1_000_001])
      expect(concurrencyProblem(limit, 'k')).toMatch(/^limit/);
    for (const key of ['', 'x'.repeat(MAX_CONCURRENCY_KEY_LENGTH + 1), 'a\nb', 'a\u202eb'])
      expect(concurrencyProblem(1, key)).toMatch(/^key/);
  });
});
