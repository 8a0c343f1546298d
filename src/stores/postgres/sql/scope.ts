// SQL of the PostgreSQL task store. Claim scopes: which tasks a process can run (ClaimScope), what it leaves out, and
// marking what waits for a version.
import type { Notify } from './fragments.js';

/**
 * A task (alias `t`) the claiming process can run: its ClaimScope as four parameters from `$p`: scoped, tools,
 * `tool version` pairs, orphaned before (claims.ts, ScopeParams).
 */
export function inScope(t: string, p: number): string {
  const [scoped, tools, versions, orphaned] = [p, p + 1, p + 2, p + 3].map((n) => `$${n}`);
  return `(${scoped}::boolean IS NOT TRUE
  OR (${t}.tool = ANY (${tools}::text[])
    AND (${t}.tool_version IS NULL OR ${t}.tool || ' ' || ${t}.tool_version = ANY (${versions}::text[])))
  OR (${orphaned}::bigint IS NOT NULL AND ${t}.updated_at <= ${orphaned}::bigint AND ${t}.tool <> ALL (${tools}::text[])))`;
}

/** `s`: the quoted schema name; `notify` as fragments.ts makes it. */
export function scopeSql(s: string, notify: Notify) {
  return {
    /**
     * $1 now, $2–$5 the scope, $6 before, $7 at most: runnable tasks of its tools the scope leaves out, that no run
     * held since $6 and not yet marked at their attempt, marked (shown-status.ts) as waiting for a server running
     * their version; each a change. SKIP LOCKED: a claim under way keeps its task.
     */
    markVersionWaits: `
      WITH m AS (
        SELECT id FROM ${s}.tasks t
        WHERE runnable AND status = 'working' AND (lease_owner IS NULL OR lease_until <= $6)
          AND updated_at <= $6 AND (expires_at IS NULL OR expires_at > $1)
          AND version_wait IS DISTINCT FROM attempt
          AND tool = ANY ($3::text[]) AND NOT ${inScope('t', 2)}
        LIMIT $7
        FOR UPDATE SKIP LOCKED
      ), u AS (
        UPDATE ${s}.tasks t SET version_wait = t.attempt, updated_at = $1, revision = t.revision + 1
        FROM m WHERE t.id = m.id RETURNING t.id
      ) SELECT u.id, ${notify('u.id', 'false', 'false')} FROM u`,
    /** Runnable tasks of the scope's tools that it leaves out, by tool and version ($1 now; $2–$5 as claim's $5–$8). */
    outOfScope: `
      SELECT tool, tool_version AS version, count(*)::int AS count FROM ${s}.tasks t
      WHERE runnable AND (lease_owner IS NULL OR lease_until < $1) AND (expires_at IS NULL OR expires_at > $1)
        AND tool = ANY ($3::text[]) AND NOT ${inScope('t', 2)}
      GROUP BY tool, tool_version ORDER BY tool, tool_version`,
  };
}
