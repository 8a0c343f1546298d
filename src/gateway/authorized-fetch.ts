// fetch for a 2025-11-25 upstream's session (the official SDK's Streamable HTTP transport), signed in with a ClientAuth
// (the gateway's client credentials or its stored sign-in): every request carries the sign-in's current access token,
// and one answered 401 (or 403 insufficient_scope) is sent again once the sign-in says it got a new token, as
// durable-mcp's own HTTP transport does (client/auth-retry.ts).
import { authorizationHeader, sendWithAuth } from '../client/auth-retry.js';
import type { ClientAuth } from '../client/oauth/types.js';

/** `init`'s headers (and a Request's own) with `authorization` set to `value`, or removed when there is none. */
function withAuthorization(input: Request | string | URL, init: RequestInit | undefined, value?: string) {
  const headers = new Headers(input instanceof Request ? input.headers : undefined);
  new Headers(init?.headers).forEach((v, name) => headers.set(name, v));
  if (value === undefined) headers.delete('authorization');
  else headers.set('authorization', value);
  return { ...init, headers };
}

/**
 * `base` with the access token of `auth` on every request. A 401 (or 403 insufficient_scope) is handed to
 * `auth.challenge`; while it gets a new token the request is sent again (a body given as a `Request` is kept for
 * that), at most MAX_CHALLENGES times, otherwise the response stands. The sign-in's errors (SignInRequiredError,
 * OAuthFlowError) are thrown as they are: they never hold a token.
 */
export function authorizedFetch(auth: ClientAuth, base: typeof fetch = fetch): typeof fetch {
  return (input, init) => {
    const signal = init?.signal ?? undefined;
    const attempt = async (): Promise<Response> => {
      const authorization = await authorizationHeader(auth, undefined, signal);
      const sent = input instanceof Request ? input.clone() : input;
      return base(sent, withAuthorization(sent, init, authorization));
    };
    return sendWithAuth(auth, attempt, signal);
  };
}

/** The fetch under an HTTP upstream's session: signed in with the target's `auth` when it has one. */
export const upstreamFetch = (target: { auth?: ClientAuth }): typeof fetch =>
  target.auth === undefined ? fetch : authorizedFetch(target.auth);
