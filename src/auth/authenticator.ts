// Turns request credentials into a tenant + principal, or a 401 challenge.
import type { AuthInfo } from '../protocol/context.js';
import type { HeaderLookup } from '../wire/headers.js';

export type AuthOutcome =
  { ok: true; auth: AuthInfo } | { ok: false; status: 401 | 403; challenge: string; message: string };

export interface Authenticator {
  readonly mode: string;
  authenticate(header: HeaderLookup): AuthOutcome | Promise<AuthOutcome>;
}

/** Development mode: every caller is the same principal. */
export function createAnonymousAuthenticator(): Authenticator {
  const outcome: AuthOutcome = { ok: true, auth: { tenant: 'default', principal: 'anonymous' } };
  return { mode: 'anonymous', authenticate: () => outcome };
}
