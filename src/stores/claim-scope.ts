// A ClaimScope as both stores' claim statements take it: flat lists, and whether there is a scope at all.
import type { ClaimScope } from '../tasks/store.js';

export interface ScopeParams {
  /** False: claim any task (no scope given). */
  scoped: boolean;
  tools: string[];
  /** `tool version` pairs (a space cannot occur in either). */
  versions: string[];
  orphanedBefore: number | null;
}

export function scopeParams(scope: ClaimScope | undefined): ScopeParams {
  if (scope === undefined) return { scoped: false, tools: [], versions: [], orphanedBefore: null };
  const tools = Object.keys(scope.tools);
  const versions = Object.entries(scope.tools).flatMap(([tool, vs]) => vs.map((v) => `${tool} ${v}`));
  return { scoped: true, tools, versions, orphanedBefore: scope.orphanedBefore ?? null };
}
