import { describe, expect, it } from 'vitest';
import type { ClientAuth } from '../client/oauth/types.js';
import { SignInRequiredError } from '../client/oauth/types.js';
import { MAX_CHALLENGES } from '../client/auth-retry.js';
import { authorizedFetch } from './authorized-fetch.js';

/** A sign-in whose token is `tok-N`, N going up by one on each challenge it accepts (`renews` of them). */
function rotatingAuth(renews = 1) {
  let n = 1;
  const challenged: number[] = [];
  const auth: ClientAuth = {
    token: async () => `tok-${n}`,
    challenge: async (res) => {
      challenged.push(res.status);
      if (challenged.length > renews) return false;
      n++;
      return true;
    },
  };
  return { auth, challenged };
}

/** A server that accepts only `valid` and records what each request carried. */
function server(
  valid: string,
  refusal: { status: number; challenge: string } = { status: 401, challenge: 'Bearer' },
) {
  const seen: { authorization: string | null; body: string; other: string | null }[] = [];
  const base = (async (input: Request | string | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const authorization = request.headers.get('authorization');
    seen.push({ authorization, body: await request.text(), other: request.headers.get('x-other') });
    if (authorization === `Bearer ${valid}`) return new Response('{"ok":true}', { status: 200 });
    return new Response('refused', {
      status: refusal.status,
      headers: { 'www-authenticate': refusal.challenge },
    });
  }) as typeof fetch;
  return { base, seen };
}

describe('authorizedFetch', () => {
  it("sends the sign-in's token, keeping the request's other headers", async () => {
    const { auth } = rotatingAuth();
    const { base, seen } = server('tok-1');
    const res = await authorizedFetch(auth, base)('http://x/mcp', {
      method: 'POST',
      body: '{"a":1}',
      headers: { 'x-other': 'kept', authorization: 'Bearer stale' },
    });
    expect(res.status).toBe(200);
    expect(seen).toEqual([{ authorization: 'Bearer tok-1', body: '{"a":1}', other: 'kept' }]);
  });

  it('after a 401 the sign-in accepts, sends the request once more with the new token', async () => {
    const { auth, challenged } = rotatingAuth();
    const { base, seen } = server('tok-2');
    const res = await authorizedFetch(auth, base)('http://x/mcp', { method: 'POST', body: 'same' });
    expect(res.status).toBe(200);
    expect(challenged).toEqual([401]);
    expect(seen.map((s) => [s.authorization, s.body])).toEqual([
      ['Bearer tok-1', 'same'],
      ['Bearer tok-2', 'same'],
    ]);
  });

  it('sends a body given as a Request again too', async () => {
    const { auth } = rotatingAuth();
    const { base, seen } = server('tok-2');
    const request = new Request('http://x/mcp', { method: 'POST', body: 'streamed' });
    expect((await authorizedFetch(auth, base)(request)).status).toBe(200);
    expect(seen.map((s) => s.body)).toEqual(['streamed', 'streamed']);
  });

  it('sends again at most MAX_CHALLENGES times, and lets the answer stand when the sign-in has nothing new', async () => {
    const many = rotatingAuth(10);
    const never = server('tok-99');
    expect((await authorizedFetch(many.auth, never.base)('http://x/mcp')).status).toBe(401);
    expect(never.seen).toHaveLength(1 + MAX_CHALLENGES);
    const none = rotatingAuth(0);
    const again = server('tok-2');
    expect((await authorizedFetch(none.auth, again.base)('http://x/mcp')).status).toBe(401);
    expect(again.seen).toHaveLength(1);
  });

  it('takes a 403 to insufficient_scope as a challenge, and any other 403 as an answer', async () => {
    const step = rotatingAuth();
    const scoped = server('tok-2', {
      status: 403,
      challenge: 'Bearer error="insufficient_scope", scope="a b"',
    });
    expect((await authorizedFetch(step.auth, scoped.base)('http://x/mcp')).status).toBe(200);
    expect(step.challenged).toEqual([403]);
    const plain = rotatingAuth();
    const forbidden = server('tok-2', { status: 403, challenge: 'Bearer error="invalid_token"' });
    expect((await authorizedFetch(plain.auth, forbidden.base)('http://x/mcp')).status).toBe(403);
    expect(plain.challenged).toEqual([]);
  });

  it("throws the sign-in's own error when a person must sign in", async () => {
    const auth: ClientAuth = {
      token: async () => undefined,
      challenge: async () => {
        throw new SignInRequiredError('http://x/mcp');
      },
    };
    const { base, seen } = server('tok-1');
    await expect(authorizedFetch(auth, base)('http://x/mcp')).rejects.toBeInstanceOf(SignInRequiredError);
    expect(seen).toEqual([{ authorization: null, body: '', other: null }]);
  });
});
