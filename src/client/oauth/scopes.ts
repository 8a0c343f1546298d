// Which scopes a sign-in asks for: the challenge's, else the resource's `scopes_supported`, else none; the union of
// what was granted and what a step-up challenge asks; `offline_access` where the authorization server offers it.

/** The scopes of a space-separated list, without repeats, in order. */
export function scopeList(scope: string | undefined): string[] {
  return [...new Set((scope ?? '').split(/\s+/).filter((s) => s !== ''))];
}

/** The union of scope lists, as a space-separated string (undefined when empty). */
export function unionScopes(...scopes: (string | undefined)[]): string | undefined {
  const all = [...new Set(scopes.flatMap(scopeList))];
  return all.length === 0 ? undefined : all.join(' ');
}

/** True when every scope of `wanted` is in `granted`. */
export function hasScopes(granted: string | undefined, wanted: string | undefined): boolean {
  const have = new Set(scopeList(granted));
  return scopeList(wanted).every((s) => have.has(s));
}

/** The scope of a first sign-in: asked for > the challenge's > the resource's scopes_supported > none. */
export function selectScope(input: {
  requested?: string;
  challenged?: string;
  scopesSupported?: readonly string[];
}): string | undefined {
  if (input.requested !== undefined && input.requested.trim() !== '') return unionScopes(input.requested);
  if (input.challenged !== undefined) return unionScopes(input.challenged);
  if (input.scopesSupported !== undefined && input.scopesSupported.length > 0)
    return unionScopes(input.scopesSupported.join(' '));
  return undefined;
}

/** Adds `offline_access` (a refresh token) when the authorization server lists it and some scope is asked for. */
export function withOfflineAccess(
  scope: string | undefined,
  asScopesSupported: readonly string[] | undefined,
): string | undefined {
  if (scope === undefined || !asScopesSupported?.includes('offline_access')) return scope;
  return unionScopes(scope, 'offline_access');
}
