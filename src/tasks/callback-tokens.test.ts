// Callback tokens: what one names comes back from a token of the same secret, until its expiry; any change, another
// secret, or a malformed token is forged.
import { describe, expect, it } from 'vitest';
import { createCallbackTokens, MAX_CALLBACK_TOKEN } from './callback-tokens.js';

const tokens = createCallbackTokens('one secret');

describe('callback tokens', () => {
  it('name the task, the event and the expiry, URL-safe, until the expiry', () => {
    const token = tokens.issue('task-1', 'approved', 2_000);
    expect(token).toMatch(/^[A-Za-z0-9_.-]+$/);
    expect(tokens.check(token, 1_999)).toEqual({
      ok: true,
      taskId: 'task-1',
      name: 'approved',
      expiresAt: 2_000,
    });
    expect(createCallbackTokens('one secret').check(token, 0)).toMatchObject({ ok: true });
    expect(tokens.check(token, 2_000)).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuses as forged another secret, any changed part and malformed tokens', () => {
    const token = tokens.issue('task-1', 'approved', 2_000);
    expect(createCallbackTokens('another').check(token, 0)).toEqual({ ok: false, reason: 'forged' });
    const [v, body, sig] = token.split('.') as [string, string, string];
    const other = tokens.issue('task-2', 'approved', 2_000).split('.')[1] as string;
    for (const bad of [
      `${v}.${other}.${sig}`,
      `${v}.${body}.${sig.slice(0, -1)}`,
      `c2.${body}.${sig}`,
      `${v}.${body}`,
      '',
      'x'.repeat(MAX_CALLBACK_TOKEN + 1),
    ])
      expect(tokens.check(bad, 0)).toEqual({ ok: false, reason: 'forged' });
  });
});
