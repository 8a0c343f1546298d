// The operator role in JWT mode: a scope or a claim value marks an operator; a claim may name its tenants.
import type { JWTPayload } from 'jose';
import type { AdminScope } from '../tasks/admin.js';
import { adminScopeOf, ownTenantScope } from './operator-scope.js';

export interface JwtOperatorOptions {
  /** A token is an operator's when this scope is in its `scope` claim (space-separated) or its `scp` claim. */
  scope?: string;
  /** A token is an operator's when this claim equals `value`, or is a list that contains it. */
  claim?: { name: string; value: string };
  /**
   * Claim naming the tenants an operator administers: a tenant, `*` for all, or a list of tenants. Without it, or
   * when the token lacks the claim, the token's own tenant. A malformed claim grants no operator role at all.
   */
  tenantsClaim?: string;
}

/** Whether a claim (a space-separated string or a list of strings) holds `value`. */
function holds(claim: unknown, value: string, spaceSeparated: boolean): boolean {
  if (typeof claim === 'string') return spaceSeparated ? claim.split(' ').includes(value) : claim === value;
  return Array.isArray(claim) && claim.includes(value);
}

/** Throws on options that could never grant the role (checked once, at construction). */
export function checkJwtOperatorOptions(options: JwtOperatorOptions): void {
  if (options.scope === undefined && options.claim === undefined)
    throw new Error('operator options need a scope or a claim that grants the role');
  if (options.scope !== undefined && !/^[\x21-\x7e]+$/.test(options.scope))
    throw new Error('the operator scope must be one scope, without spaces');
  if (options.claim !== undefined && (options.claim.name === '' || options.claim.value === ''))
    throw new Error('the operator claim needs a name and a value');
  if (options.tenantsClaim === '') throw new Error('the operator tenants claim needs a name');
}

/** The operator scope a verified token grants, or undefined (no role, or a malformed tenants claim). */
export function jwtOperatorScope(
  payload: JWTPayload,
  options: JwtOperatorOptions,
  tenant: string,
): AdminScope | undefined {
  const { scope, claim, tenantsClaim } = options;
  const granted =
    (scope !== undefined && (holds(payload.scope, scope, true) || holds(payload.scp, scope, true))) ||
    (claim !== undefined && holds(payload[claim.name], claim.value, false));
  if (!granted) return undefined;
  const named = tenantsClaim === undefined ? undefined : payload[tenantsClaim];
  if (named === undefined) return ownTenantScope(tenant);
  const parsed = adminScopeOf(named);
  return parsed.ok ? parsed.value : undefined;
}
