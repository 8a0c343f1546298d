// A request with a sign-in: the bearer token asked for on each attempt, and the request sent again after the sign-in
// answered a 401 or an `insufficient_scope` 403 with new tokens (at most MAX_CHALLENGES times per request).
import { isAuthChallenge } from './oauth/challenge.js';
import type { ClientAuth } from './oauth/types.js';

export const MAX_CHALLENGES = 3;

/** A bearer token given as a value or a function. */
export type TokenSource = string | (() => string | Promise<string>);

/** The Authorization header value of one attempt: from the sign-in when there is one, else from `token`. */
export async function authorizationHeader(
  auth: ClientAuth | undefined,
  token: TokenSource | undefined,
  signal?: AbortSignal,
): Promise<string | undefined> {
  if (auth !== undefined) {
    const current = await auth.token(signal);
    if (current !== undefined) return `Bearer ${current}`;
  }
  if (token === undefined) return undefined;
  return `Bearer ${typeof token === 'function' ? await token() : token}`;
}

/** Sends with `attempt`, and again each time the sign-in says the challenge it got was answered. */
export async function sendWithAuth(
  auth: ClientAuth | undefined,
  attempt: () => Promise<Response>,
  signal?: AbortSignal,
): Promise<Response> {
  let res = await attempt();
  for (let i = 0; auth !== undefined && i < MAX_CHALLENGES && isAuthChallenge(res); i++) {
    if (!(await auth.challenge(res, signal))) break;
    await res.body?.cancel().catch(() => undefined);
    res = await attempt();
  }
  return res;
}
