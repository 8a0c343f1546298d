// Static bearer tokens from a JSON file ({"tokens":[{token, tenant, principal, roles?, operatorTenants?}]}),
// re-read on demand (SIGHUP).
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AdminScope } from '../tasks/admin.js';
import type { Authenticator, AuthOutcome } from './authenticator.js';
import { bearerToken, challenge } from './bearer.js';
import { adminScopeOf, OPERATOR_ROLE, ownTenantScope } from './operator-scope.js';

/** What a known token lets in: computed once per file, shared (frozen) by every request that presents it. */
export type TokenGrant = Extract<AuthOutcome, { ok: true }>;

export type TokenFileOutcome = { ok: true; value: Map<string, TokenGrant> } | { ok: false; reason: string };

type EntryOutcome = { ok: true; value: AdminScope | undefined } | { ok: false; reason: string };

const digest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();
const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 256;

/** The operator scope an entry grants: none without `roles: ["operator"]`, its own tenant unless it names others. */
function operatorOf(e: Record<string, unknown>, tenant: string, name: string): EntryOutcome {
  const roles = e.roles ?? [];
  if (!Array.isArray(roles) || !roles.every((r) => typeof r === 'string'))
    return { ok: false, reason: `${name}.roles must be a list of role names, e.g. ["${OPERATOR_ROLE}"]` };
  const unknown = roles.find((r) => r !== OPERATOR_ROLE);
  if (unknown !== undefined)
    return {
      ok: false,
      reason: `${name}.roles: unknown role ${JSON.stringify(unknown)} (known: ${OPERATOR_ROLE})`,
    };
  const operator = roles.length > 0;
  if (e.operatorTenants === undefined)
    return { ok: true, value: operator ? ownTenantScope(tenant) : undefined };
  if (!operator) return { ok: false, reason: `${name}.operatorTenants needs "roles": ["${OPERATOR_ROLE}"]` };
  const scope = adminScopeOf(e.operatorTenants);
  return scope.ok ? scope : { ok: false, reason: `${name}.operatorTenants ${scope.reason}` };
}

export function parseTokenFile(text: string): TokenFileOutcome {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not valid JSON' };
  }
  const list = (raw as { tokens?: unknown } | null)?.tokens;
  if (!Array.isArray(list))
    return { ok: false, reason: 'expected {"tokens":[{"token","tenant","principal"}]}' };
  const map = new Map<string, TokenGrant>();
  for (const [i, entry] of list.entries()) {
    const e = entry as Record<string, unknown> | null;
    if (e === null || typeof e !== 'object' || !isText(e.tenant) || !isText(e.principal)) {
      return { ok: false, reason: `tokens[${i}] needs string token, tenant and principal` };
    }
    if (typeof e.token !== 'string' || e.token.length < 16) {
      return { ok: false, reason: `tokens[${i}].token must be a string of at least 16 characters` };
    }
    const key = digest(e.token).toString('hex');
    if (map.has(key)) return { ok: false, reason: `tokens[${i}] repeats an earlier token` };
    const operator = operatorOf(e, e.tenant, `tokens[${i}] (principal ${JSON.stringify(e.principal)})`);
    if (!operator.ok) return operator;
    const auth = Object.freeze({ tenant: e.tenant, principal: e.principal });
    map.set(
      key,
      Object.freeze(
        operator.value === undefined ? { ok: true, auth } : { ok: true, auth, operator: operator.value },
      ),
    );
  }
  return { ok: true, value: map };
}

export interface StaticTokenAuthenticator extends Authenticator {
  /** Re-reads the file; on a bad file the previous tokens stay in force and the reason is returned. */
  reload(): string | undefined;
  /** Whether a token of the file in force is an operator's. */
  grantsOperators(): boolean;
}

export function createStaticTokenAuthenticator(path: string): StaticTokenAuthenticator {
  const load = (): Map<string, TokenGrant> => {
    const parsed = parseTokenFile(readFileSync(path, 'utf8'));
    if (!parsed.ok) throw new Error(`${path}: ${parsed.reason}`);
    return parsed.value;
  };
  let tokens = load();
  const missing: AuthOutcome = {
    ok: false,
    status: 401,
    challenge: challenge({}),
    message: 'Authentication required',
  };
  const invalid: AuthOutcome = {
    ok: false,
    status: 401,
    challenge: challenge({ error: 'invalid_token' }),
    message: 'Invalid bearer token',
  };
  return {
    mode: 'static-tokens',
    authenticate(header) {
      const token = bearerToken(header);
      if (token === undefined) return missing;
      // Compare SHA-256 digests in constant time against every entry (no early exit).
      const d = digest(token);
      let found: TokenGrant | undefined;
      for (const [key, grant] of tokens) {
        if (timingSafeEqual(d, Buffer.from(key, 'hex'))) found = grant;
      }
      return found ?? invalid;
    },
    grantsOperators: () => [...tokens.values()].some((grant) => grant.operator !== undefined),
    reload() {
      try {
        tokens = load();
        return undefined;
      } catch (err) {
        return err instanceof Error ? err.message : String(err);
      }
    },
  };
}
