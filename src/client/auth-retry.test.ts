import { describe, expect, it } from 'vitest';
import { authorizationHeader, MAX_CHALLENGES, sendWithAuth } from './auth-retry.js';
import type { ClientAuth } from './oauth/types.js';

const challenged = (status: number, header = 'Bearer') =>
  new Response('{}', { status, headers: { 'www-authenticate': header } });

function countingAuth(answer: boolean): ClientAuth & { challenges: number } {
  const auth = {
    challenges: 0,
    token: async () => 'tok',
    challenge: async () => {
      auth.challenges += 1;
      return answer;
    },
  };
  return auth;
}

describe('sendWithAuth', () => {
  it(`gives up after ${MAX_CHALLENGES} challenges of one request`, async () => {
    const auth = countingAuth(true);
    let sent = 0;
    const res = await sendWithAuth(auth, async () => {
      sent += 1;
      return challenged(401);
    });
    expect(res.status).toBe(401);
    expect(auth.challenges).toBe(MAX_CHALLENGES);
    expect(sent).toBe(MAX_CHALLENGES + 1);
  });

  it('lets the response stand when the sign-in says so, and ignores a 403 without insufficient_scope', async () => {
    const auth = countingAuth(false);
    expect((await sendWithAuth(auth, async () => challenged(401))).status).toBe(401);
    expect(auth.challenges).toBe(1);
    expect((await sendWithAuth(auth, async () => challenged(403, 'Bearer error="forbidden"'))).status).toBe(
      403,
    );
    expect(auth.challenges).toBe(1);
  });

  it('prefers the sign-in token to a fixed one', async () => {
    expect(await authorizationHeader(countingAuth(true), 'fixed')).toBe('Bearer tok');
    expect(
      await authorizationHeader({ token: async () => undefined, challenge: async () => false }, 'fixed'),
    ).toBe('Bearer fixed');
    expect(await authorizationHeader(undefined, undefined)).toBeUndefined();
  });
});
