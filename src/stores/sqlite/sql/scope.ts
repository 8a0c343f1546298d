// Prepared SQL of the SQLite task store. Claim scopes: the first in line of the tasks a process can run
// (ClaimScope), and what its scope leaves out.
import type { SqliteDatabase } from '../database.js';
import type { ScopeParams } from '../../claim-scope.js';
import { CLAIMABLE, LINE_ORDER } from './conditions.js';

/** A task a process can run (ClaimScope as ScopeParams): @tools, @versions JSON arrays, @orphaned. */
const IN_SCOPE = `(
    (tool IN (SELECT value FROM json_each(@tools))
      AND (tool_version IS NULL OR tool || ' ' || tool_version IN (SELECT value FROM json_each(@versions))))
    OR (@orphaned IS NOT NULL AND updated_at <= @orphaned AND tool NOT IN (SELECT value FROM json_each(@tools))))`;

const scopeArgs = (scope: ScopeParams) => ({
  tools: JSON.stringify(scope.tools),
  versions: JSON.stringify(scope.versions),
  orphaned: scope.orphanedBefore,
});

export function prepareScopeQueries(db: SqliteDatabase) {
  // The same, among the tasks a process can run (ClaimScope): its tools' tasks of versions it replays (or none
  // recorded), and other tools' tasks once untouched since @orphaned.
  const nextInScope = db.prepare(`
    SELECT id, lease_owner FROM tasks INDEXED BY tasks_fair WHERE runnable = 1 AND ${CLAIMABLE} AND ${IN_SCOPE}
    ORDER BY ${LINE_ORDER} LIMIT 1`);
  const outOfScope = db.prepare(`
    SELECT tool, tool_version AS version, count(*) AS count FROM tasks INDEXED BY tasks_fair
    WHERE runnable = 1 AND ${CLAIMABLE}
      AND tool IN (SELECT value FROM json_each(@tools)) AND NOT ${IN_SCOPE}
    GROUP BY tool, tool_version ORDER BY tool, tool_version`);
  return {
    /** The first in line of the runnable tasks in scope (claims.ts, nextClaimable, for any). */
    nextInScope: (now: number, scope: ScopeParams) =>
      nextInScope.get({ now, ...scopeArgs(scope) }) as { id: string; lease_owner: string | null } | undefined,
    outOfScope: (now: number, scope: ScopeParams) =>
      outOfScope.all({ now, ...scopeArgs(scope) }) as {
        tool: string;
        version: string | null;
        count: number;
      }[],
  };
}
