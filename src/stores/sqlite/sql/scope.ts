// Prepared SQL of the SQLite task store. Claim scopes: the first in line of the tasks a process can run
// (ClaimScope), and what its scope leaves out.
import type { SqliteDatabase } from '../database.js';
import type { ScopeParams } from '../../claim-scope.js';
import { CLAIMABLE, LINE_ORDER, OWNER_PRIORITY_ORDER } from './conditions.js';
import { CANDIDATE_COLUMNS, type ClaimCandidate } from './claims.js';

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
    SELECT ${CANDIDATE_COLUMNS} FROM tasks INDEXED BY tasks_fair WHERE runnable = 1 AND ${CLAIMABLE} AND ${IN_SCOPE}
    ORDER BY ${LINE_ORDER} LIMIT 1`);
  const ownerBestInScope = db.prepare(`
    SELECT ${CANDIDATE_COLUMNS} FROM tasks INDEXED BY tasks_owner_priority
    WHERE runnable = 1 AND tenant = @tenant AND principal = @principal AND ${CLAIMABLE} AND ${IN_SCOPE}
    ORDER BY ${OWNER_PRIORITY_ORDER} LIMIT 1`);
  const outOfScope = db.prepare(`
    SELECT tool, tool_version AS version, count(*) AS count FROM tasks INDEXED BY tasks_fair
    WHERE runnable = 1 AND ${CLAIMABLE}
      AND tool IN (SELECT value FROM json_each(@tools)) AND NOT ${IN_SCOPE}
    GROUP BY tool, tool_version ORDER BY tool, tool_version`);
  // Runnable tasks of its tools a scope leaves out, that no run held since @before and not yet marked at their
  // attempt: marked (shown-status.ts) as waiting for a server running their version.
  const markVersionWaits = db.prepare(`
    UPDATE tasks SET version_wait = attempt, updated_at = @now WHERE id IN (
      SELECT id FROM tasks INDEXED BY tasks_fair
      WHERE runnable = 1 AND status = 'working' AND (lease_owner IS NULL OR lease_until <= @before)
        AND updated_at <= @before AND (expires_at IS NULL OR expires_at > @now)
        AND (version_wait IS NULL OR version_wait <> attempt)
        AND tool IN (SELECT value FROM json_each(@tools)) AND NOT ${IN_SCOPE}
      LIMIT @max)
    RETURNING id`);
  return {
    markVersionWaits: (now: number, before: number, max: number, scope: ScopeParams) =>
      (markVersionWaits.all({ now, before, max, ...scopeArgs(scope) }) as { id: string }[]).map((r) => r.id),
    /** The first in line of the runnable tasks in scope (claims.ts, nextClaimable, for any). */
    nextInScope: (now: number, scope: ScopeParams) =>
      nextInScope.get({ now, ...scopeArgs(scope) }) as ClaimCandidate | undefined,
    /** The same as claims.ts, ownerBest, among the tasks in scope. */
    ownerBestInScope: (now: number, scope: ScopeParams, head: ClaimCandidate) =>
      ownerBestInScope.get({ now, tenant: head.tenant, principal: head.principal, ...scopeArgs(scope) }) as
        ClaimCandidate | undefined,
    outOfScope: (now: number, scope: ScopeParams) =>
      outOfScope.all({ now, ...scopeArgs(scope) }) as {
        tool: string;
        version: string | null;
        count: number;
      }[],
  };
}
