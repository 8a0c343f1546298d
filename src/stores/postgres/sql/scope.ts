// SQL of the PostgreSQL task store. Claim scopes: which tasks a process can run (ClaimScope), and what it leaves out.

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

/** `s`: the quoted schema name. */
export function scopeSql(s: string) {
  return {
    /** Runnable tasks of the scope's tools that it leaves out, by tool and version ($1 now; $2–$5 as claim's $5–$8). */
    outOfScope: `
      SELECT tool, tool_version AS version, count(*)::int AS count FROM ${s}.tasks t
      WHERE runnable AND (lease_owner IS NULL OR lease_until < $1) AND (expires_at IS NULL OR expires_at > $1)
        AND tool = ANY ($3::text[]) AND NOT ${inScope('t', 2)}
      GROUP BY tool, tool_version ORDER BY tool, tool_version`,
  };
}
