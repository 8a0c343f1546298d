// SQL of the PostgreSQL task store. Reads: a task for its owner or an operator, the next wake-up, and the counts.
import { MAX_FAMILY_CHILDREN } from '../../core/children.js';
import { DUE, NON_TERMINAL, OWNED_BY } from './fragments.js';

/**
 * The columns getOwned packs into its JSON array, in order (then its outstanding requests and whether it has
 * children): those of SNAPSHOT_COLUMNS but the result and the error, and its parent.
 */
export const OWNED_PACKED = [
  'id',
  'status',
  'status_message',
  'created_at',
  'updated_at',
  'ttl_ms',
  'poll_interval_ms',
  'expires_at',
  'revision',
  'tool',
  'tool_version',
  'attempt',
  'version_wait',
  'progress',
  'concurrency_key',
  'parked_at',
  'rate_key',
  'rate_reserved_at',
  'wake_at',
  'paused_at',
  'parent_id',
] as const;

/** getOwned's select of task `id` (an SQL expression) under the owner test `owned` (OWNED_BY's). */
const ownedSelect = (s: string, id: string, owned: string): string => `
      SELECT json_build_array(${OWNED_PACKED.join(', ')},
        CASE WHEN t.status = 'input_required' THEN (
          SELECT json_agg(json_build_array(i.key, i.request) ORDER BY i.asked_at, i.key COLLATE "C")
          FROM ${s}.task_inputs i WHERE i.task_id = t.id AND i.answer IS NULL AND NOT i.superseded
        ) END,
        EXISTS (SELECT 1 FROM ${s}.tasks c WHERE c.parent_id = t.id)) AS r, result, error
      FROM ${s}.tasks t WHERE t.id = ${id} AND ${owned}`;

/** An owner's reads of one task, or of several at once (tasks/get). */
function ownedReadSql(s: string) {
  return {
    /**
     * One statement, one snapshot: the task and, while it waits for input, its outstanding requests. Only the
     * columns a snapshot is built from, and all but the result and the error packed into one JSON array (OWNED_PACKED,
     * then the outstanding requests and whether the task has children): each column of a result costs the driver
     * its description and parsing on every poll, one JSON array a single parse.
     */
    getOwned: ownedSelect(s, '$1', OWNED_BY('t.')),

    /**
     * getOwned of several tasks at once ($1 ids, $2 tenants, $3 principals, pairwise; owned-reads.ts coalesces concurrent
     * polls into it): a row per pair whose task exists and belongs to that owner (the same owner test as getOwned's,
     * so another owner's task is as absent as a missing one and none of its columns leaves the database), with `n`,
     * the pair's position from 1. The LIMIT keeps the lookup a nested loop of primary-key probes: joined plainly,
     * the planner may hash the pairs and scan the whole table.
     */
    getOwnedMany: `
    SELECT o.r, o.result, o.error, w.n::int AS n
    FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS w(id, tenant, principal, n)
    CROSS JOIN LATERAL (${ownedSelect(s, 'w.id', '(t.tenant = w.tenant AND t.principal = w.principal) IS TRUE')}
      LIMIT 1) o`,
  };
}

/** `s`: the quoted schema name. */
export function readSql(s: string) {
  return {
    ...ownedReadSql(s),

    /** $1 now: the earliest wake-up still to come. */
    nextWake: `
      SELECT wake_at FROM ${s}.tasks WHERE wake_at IS NOT NULL AND wake_at > $1 AND status = 'working'
      ORDER BY wake_at LIMIT 1`,

    /** Everything about one task, whoever owns it (operators). */
    inspect: `
      SELECT t.*,
        (SELECT coalesce(json_agg(json_build_array(st.name, st.started_at, st.saved_at, st.seq)), '[]'::json)
          FROM ${s}.task_steps st WHERE st.task_id = t.id) AS done_steps,
        (SELECT coalesce(json_agg(json_build_array(h.seq, h.at, h.status, h.message) ORDER BY h.seq), '[]'::json)
          FROM ${s}.task_history h WHERE h.task_id = t.id) AS history,
        (SELECT coalesce(json_agg(json_build_array(a.name, a.failed, a.last_failure)), '[]'::json)
          FROM ${s}.task_step_attempts a WHERE a.task_id = t.id) AS attempts,
        (SELECT coalesce(json_agg(r.id ORDER BY r.created_at, r.id), '[]'::json) FROM (
          SELECT id, created_at FROM ${s}.tasks WHERE retry_of = t.id ORDER BY created_at, id LIMIT 100) r) AS retries,
        (SELECT coalesce(json_agg(json_build_object('id', c.id, 'tool', c.tool, 'status', c.status)
            ORDER BY c.created_at, c.id), '[]'::json) FROM (
          SELECT id, tool, status, created_at FROM ${s}.tasks WHERE parent_id = t.id ORDER BY created_at, id
          LIMIT ${MAX_FAMILY_CHILDREN}) c) AS children
      FROM ${s}.tasks t WHERE t.id = $1`,

    countActive: `
      SELECT count(*)::int AS n FROM ${s}.tasks WHERE tenant = $1 AND principal = $2 AND ${NON_TERMINAL}`,

    /** Every task the owner keeps, of any status (the storage quota): an index-only scan of tasks_owner_created. */
    countStored: `SELECT count(*)::int AS n FROM ${s}.tasks WHERE tenant = $1 AND principal = $2`,

    /** The bytes the owner's kept tasks store (the byte quota): its shards of the count migration 17 keeps. */
    ownerBytes: `SELECT coalesce(sum(bytes), 0)::bigint AS n FROM ${s}.owner_bytes WHERE tenant = $1 AND principal = $2`,

    /** ownerBytes of several owners at once ($1 their tenants, $2 their principals, pairwise): owners with a count. */
    ownersBytes: `
      SELECT o.tenant, o.principal, sum(o.bytes)::bigint AS n
      FROM unnest($1::text[], $2::text[]) AS w(tenant, principal)
      JOIN ${s}.owner_bytes o ON o.tenant = w.tenant AND o.principal = w.principal
      GROUP BY o.tenant, o.principal`,

    /** The same two counts for a whole tenant. */
    countTenantActive: `SELECT count(*)::int AS n FROM ${s}.tasks WHERE tenant = $1 AND ${NON_TERMINAL}`,
    countTenantStored: `SELECT count(*)::int AS n FROM ${s}.tasks WHERE tenant = $1`,

    /**
     * One statement, one snapshot: counts by status (index-only scans of tasks_status, not a scan of the table) and
     * the runnable backlog at $1 (a partial index of the runnable tasks: tasks_fair or an owner's).
     */
    stats: `
      SELECT
        (SELECT count(*) FROM ${s}.tasks WHERE status = 'working')::int AS working,
        (SELECT count(*) FROM ${s}.tasks WHERE status = 'input_required')::int AS input_required,
        (SELECT count(*) FROM ${s}.tasks WHERE status = 'completed')::int AS completed,
        (SELECT count(*) FROM ${s}.tasks WHERE status = 'failed')::int AS failed,
        (SELECT count(*) FROM ${s}.tasks WHERE status = 'cancelled')::int AS cancelled,
        ((SELECT count(*) FROM ${s}.tasks WHERE runnable AND (lease_owner IS NULL OR lease_until < $1)
          AND (expires_at IS NULL OR expires_at > $1)) + (SELECT count(*) FROM ${s}.tasks WHERE ${DUE('$1')}))::int
          AS runnable`,

    countRunnable: `
      SELECT ((SELECT count(*) FROM ${s}.tasks
        WHERE runnable AND (lease_owner IS NULL OR lease_until < $1) AND (expires_at IS NULL OR expires_at > $1))
        + (SELECT count(*) FROM ${s}.tasks WHERE ${DUE('$1')}))::int AS n`,
  };
}
