// Turns request credentials into a tenant + principal (and, for operators, the tenants they administer), or a 401.
import type { AuthInfo } from '../protocol/tool-types.js';
import type { AdminScope } from '../tasks/admin.js';
import type { HeaderLookup } from '../wire/headers.js';

/**
 * A caller let in, or refused. `operator` is set only for a credential granted the operator role: the tenants whose
 * tasks it may see and act on through the operator surfaces. It stays beside `auth`, not in it: MCP requests, tool
 * handlers and task ownership see the caller's identity alone.
 */
export type AuthOutcome =
  | { ok: true; auth: AuthInfo; operator?: AdminScope }
  | { ok: false; status: 401 | 403; challenge: string; message: string };

export interface Authenticator {
  readonly mode: string;
  authenticate(header: HeaderLookup): AuthOutcome | Promise<AuthOutcome>;
}

export interface AnonymousAuthOptions {
  /** Makes the one anonymous caller an operator of this scope (development only). */
  operator?: AdminScope;
}

/** Development mode: every caller is the same principal. */
export function createAnonymousAuthenticator(options: AnonymousAuthOptions = {}): Authenticator {
  const auth: AuthInfo = { tenant: 'default', principal: 'anonymous' };
  const outcome: AuthOutcome =
    options.operator === undefined ? { ok: true, auth } : { ok: true, auth, operator: options.operator };
  return { mode: 'anonymous', authenticate: () => outcome };
}
