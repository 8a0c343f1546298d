// The rule for new idempotency keys: 1 to 255 characters, none of them a control character.
import { describe, expect, it } from 'vitest';
import { checkIdempotencyKey } from './idempotency-key.js';

describe('checkIdempotencyKey', () => {
  it('takes 1 to 255 characters without control characters, and says why it refuses the rest', () => {
    for (const key of ['k', 'k'.repeat(255), 'déploiement 7 ✓', '01a24939-ee5f-791d-a100-80366e7e8c21'])
      expect(checkIdempotencyKey(key)).toEqual({ ok: true, value: key });
    for (const bad of [undefined, 42, '', 'k'.repeat(256)])
      expect(checkIdempotencyKey(bad)).toEqual({
        ok: false,
        reason: 'must be a string of 1 to 255 characters',
      });
    for (const [key, at] of [
      ['\u0000', 'U+0000 at 0'],
      ['a\tb', 'U+0009 at 1'],
      ['a\nb', 'U+000A at 1'],
      ['ab\u001b[2J', 'U+001B at 2'],
      ['\u007f', 'U+007F at 0'],
      ['x\u009b31m', 'U+009B at 1'],
      ['x\u0085', 'U+0085 at 1'],
    ])
      expect(checkIdempotencyKey(key)).toEqual({
        ok: false,
        reason: `must not contain control characters (${at})`,
      });
  });
});
