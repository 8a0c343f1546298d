// fetch for a 2025-11-25 upstream's session (the official SDK's Streamable HTTP transport), signed in with a ClientAuth
// (the gateway's client credentials or its stored sign-in): every request carries the sign-in's current access token,
// and one answered 401 (or 403 insufficient_scope) is sent once more after the sign-in says it got a new token.
import type { ClientAuth } from '../client/oauth/types.js';

/** Whether a response asks for other credentials: a 401, or a 403 whose challenge says `insufficient_scope`. */
export function asksForCredentials(res: Response): boolean {
  if (res.status === 401) return true;
  if (res.status !== 403) return false;
  return /\berror\s*=\s*"?insufficient_scope\b/i.test(res.headers.get('www-authenticate') ?? '');
}

/** `init` with `authorization: Bearer <token>` (or without any authorization when there is no token). */
function withToken(input: Request | string | URL, init: RequestInit | undefined, token: string | undefined) {
  const headers = new Headers(input instanceof Request ? input.headers : undefined);
  new Headers(init?.headers).forEach((value, name) => headers.set(name, value));
  if (token === undefined) headers.delete('authorization');
  else headers.set('authorization', `Bearer ${token}`);
  return { ...init, headers };
}

/**
 * `base` with the access token of `auth` on every request. A 401 (or 403 insufficient_scope) is handed to
 * `auth.challenge`; when it got a new token the request is sent once more (a body given as a `Request` is kept for
 * that), otherwise the response stands. The sign-in's errors (SignInRequiredError, OAuthFlowError) are thrown as
 * they are: they never hold a token.
 */
export function authorizedFetch(auth: ClientAuth, base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const signal = init?.signal ?? undefined;
    const spare = input instanceof Request ? input.clone() : input;
    const first = await base(input, withToken(input, init, await auth.token(signal)));
    if (!asksForCredentials(first) || !(await auth.challenge(first, signal))) return first;
    await first.body?.cancel().catch(() => undefined);
    return base(spare, withToken(spare, init, await auth.token(signal)));
  };
}

/** The fetch under an HTTP upstream's session: signed in with the target's `auth` when it has one. */
export const upstreamFetch = (target: { auth?: ClientAuth }): typeof fetch =>
  target.auth === undefined ? fetch : authorizedFetch(target.auth);
