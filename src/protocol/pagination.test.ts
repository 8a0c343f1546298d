import { describe, expect, it } from 'vitest';
import { paginate } from './pagination.js';

describe('paginate', () => {
  const items = Array.from({ length: 5 }, (_, i) => i);
  it('walks every page in order', () => {
    const seen: number[] = [];
    let cursor: string | undefined;
    do {
      const { page, nextCursor } = paginate(items, cursor, 2);
      seen.push(...page);
      cursor = nextCursor;
    } while (cursor !== undefined);
    expect(seen).toEqual(items);
  });
  it('rejects cursors it did not issue', () => {
    for (const bad of ['nope', 123, Buffer.from('o99').toString('base64url'), '']) {
      expect(() => paginate(items, bad, 2)).toThrow(/cursor/);
    }
  });
});
