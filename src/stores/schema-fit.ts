// Whether this release may serve a store a newer release has migrated (a rollback), the same rule for both stores.
//
// Migrations are forward only and, as a rule, additive: a release keeps working on a schema that a newer one
// migrated (a rolling upgrade relies on it, and so does rolling back). A newer migration that older releases cannot
// serve on records, in its own SQL, its version under SERVE_FLOOR_KEY in `server_meta`: a release whose migrations
// end below that version refuses to serve the store instead of corrupting it.

/** The `server_meta` key: the lowest migration a release must know to serve the store (absent: any release). */
export const SERVE_FLOOR_KEY = 'serve_min_migration';

export type SchemaFit =
  | {
      readonly ok: true;
      /** Applied migrations this release does not know (a newer release's). */
      readonly newer: number[];
    }
  | { readonly ok: false; readonly reason: string };

/**
 * Judges a store's applied migrations against the ones this release knows. `where` names the store in the reason
 * (`schema "durable_mcp"`, a file path). Missing migrations are judged elsewhere (they depend on --no-migrate).
 */
export function schemaFit(
  where: string,
  known: readonly number[],
  applied: readonly number[],
  floor: string | undefined,
): SchemaFit {
  const newer = applied.filter((v) => !known.includes(v)).sort((a, b) => a - b);
  const own = Math.max(0, ...known);
  if (floor !== undefined && !/^\d{1,9}$/.test(floor))
    return { ok: false, reason: `${where} has an unreadable ${SERVE_FLOOR_KEY} (${JSON.stringify(floor)})` };
  const needs = floor === undefined ? 0 : Number(floor);
  if (needs <= own) return { ok: true, newer };
  return {
    ok: false,
    reason:
      `${where} was migrated by a newer release (migrations ${newer.join(', ')}) that releases before its ` +
      `migration ${needs} cannot serve; this release knows migrations up to ${own}. Serve it with that newer ` +
      'release, or restore the backup taken before the upgrade (docs/operations.md, "Rolling back")',
  };
}

/** The warning a release logs when it serves a store that has newer migrations (undefined: none). */
export const newerSchemaWarning = (newer: readonly number[]): string | undefined =>
  newer.length === 0
    ? undefined
    : `serving a store with migrations ${newer.join(', ')} of a newer release, which leave older releases ` +
      'working: a rollback (docs/operations.md, "Rolling back")';
