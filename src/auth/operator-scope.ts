// The operator role: which tenants a credential may administer, read from a token file entry or a JWT claim.
import type { AdminScope } from '../tasks/admin.js';

export type { AdminScope };

/** The role name that makes a credential an operator's (tokens.json `roles`). */
export const OPERATOR_ROLE = 'operator';

export type ScopeOutcome = { ok: true; value: AdminScope } | { ok: false; reason: string };

const isTenant = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 256;

const ALL: AdminScope = Object.freeze({ tenants: 'all' });

/** The scope of an operator whose grant names no tenants: its own tenant only. */
export const ownTenantScope = (tenant: string): AdminScope =>
  Object.freeze({ tenants: Object.freeze([tenant]) });

/**
 * Operator tenants as written in a grant: `"*"` (all tenants, only ever explicit), one tenant name, or a non-empty
 * list of tenant names (`["*"]` also means all; `"*"` inside a longer list is refused as ambiguous).
 */
export function adminScopeOf(value: unknown): ScopeOutcome {
  if (value === '*') return { ok: true, value: ALL };
  if (isTenant(value)) return { ok: true, value: ownTenantScope(value) };
  if (!Array.isArray(value) || value.length === 0 || !value.every(isTenant))
    return { ok: false, reason: 'must be "*" or a non-empty list of tenant names' };
  if (value.includes('*')) {
    return value.length === 1
      ? { ok: true, value: ALL }
      : { ok: false, reason: 'lists tenants and "*": write "*" alone for all tenants' };
  }
  return { ok: true, value: Object.freeze({ tenants: Object.freeze([...new Set(value)]) }) };
}
