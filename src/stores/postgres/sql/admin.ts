// SQL of the PostgreSQL task store. The operators' port: searches (built per set of filters), a task's owner by id,
// its payload columns, retry and purge under the task's row lock, and the overview's counts.
import { adminSearchSql, type AdminDialect, type CheckedQuery } from '../../admin-query.js';
import { fairPlace, NON_TERMINAL, SNAPSHOT_COLUMNS, type Notify } from './fragments.js';

const dialect: AdminDialect = {
  param(params, value) {
    params.push(value);
    return `$${params.length}`;
  },
  oneOf(params, column, values) {
    params.push(values);
    return `${column} = ANY($${params.length}::text[])`;
  },
  // Sealed errors are not JSON (expired tasks' are plain): only plain messages are searched.
  errorContains(params, needle) {
    params.push(needle.toLowerCase());
    return `strpos(lower(CASE WHEN left(error, 1) = '{' THEN error::jsonb ->> 'message' END), $${params.length}) > 0`;
  },
};

/** The statement and parameters of one page of a search within `tenants` (undefined: any); undefined: no match. */
export const searchSql = (s: string, tenants: readonly string[] | undefined, q: CheckedQuery) =>
  adminSearchSql(dialect, `${s}.tasks`, tenants, q);

/** The overview's counts; `scoped`: the tenants are the last parameter. */
function overviewSql(s: string, scoped: boolean) {
  const within = (n: number): string => (scoped ? `tenant = ANY($${n}::text[]) AND` : '');
  return {
    byTool: `
      SELECT tool, tool_version, status, count(*)::int AS n FROM ${s}.tasks
      ${scoped ? 'WHERE tenant = ANY($1::text[])' : ''}
      GROUP BY tool, tool_version, status ORDER BY tool, tool_version, status`,
    /** $1 since (exclusive), $2 now. */
    window: `
      SELECT
        (SELECT count(*) FROM ${s}.tasks WHERE ${within(3)} created_at > $1 AND created_at <= $2)::int AS created,
        (SELECT count(*) FROM ${s}.tasks
          WHERE ${within(3)} status = 'completed' AND updated_at > $1 AND updated_at <= $2)::int AS completed,
        (SELECT count(*) FROM ${s}.tasks
          WHERE ${within(3)} status = 'failed' AND updated_at > $1 AND updated_at <= $2)::int AS failed`,
    /** $1 the time before which an unfinished task is stuck. */
    stuck: `SELECT count(*)::int AS n FROM ${s}.tasks WHERE ${within(2)} ${NON_TERMINAL} AND updated_at <= $1`,
  };
}

/** `s`: the quoted schema name. */
export function adminSql(s: string, notify: Notify) {
  return {
    all: overviewSql(s, false),
    some: overviewSql(s, true),

    ownerOf: `SELECT tenant, principal, status FROM ${s}.tasks WHERE id = $1`,

    /** Keys of the task's input requests still waiting for an answer, in the order asked. */
    pendingInputs: `SELECT key FROM ${s}.task_inputs WHERE task_id = $1 AND answer IS NULL AND NOT superseded
      ORDER BY asked_at, key COLLATE "C"`,

    /** The task's tenant and payload columns: arguments, result and `[key, request, answer]` rows in the order asked. */
    payloads: `
      SELECT t.id, t.tenant, t.args, t.result,
        (SELECT coalesce(json_agg(json_build_array(i.key, i.request, i.answer) ORDER BY i.asked_at, i.key COLLATE "C"),
          '[]'::json) FROM ${s}.task_inputs i WHERE i.task_id = t.id) AS inputs
      FROM ${s}.tasks t WHERE t.id = $1`,

    /** The row lock of retry and purge: a run's ending or an owner's write waits for, then re-checks, this one. */
    lock: `SELECT tenant, principal, status FROM ${s}.tasks WHERE id = $1 FOR UPDATE`,

    /**
     * $2 now, $3 status message. A failed task runs again from its steps: working and runnable, at a new place in
     * line, without its error, lease or wake-up, its TTL counted again from now. Failed attempts of steps without a
     * result are forgotten (their retry policy counts afresh); the attempt number (the fencing token) goes on.
     */
    retry: `
      WITH u AS (
        UPDATE ${s}.tasks t SET status = 'working', result = NULL, error = NULL, failure = NULL,
          status_message = $3, updated_at = $2::bigint, runnable = true, cancel_requested = false,
          lease_owner = NULL, lease_until = NULL, wake_at = NULL,
          fair_at = ${fairPlace(s, '$2::bigint', 't.tenant', 't.principal')}, placed_at = $2::bigint,
          expires_at = CASE WHEN t.ttl_ms IS NULL THEN NULL ELSE $2::bigint + t.ttl_ms END,
          revision = t.revision + 1
        WHERE t.id = $1 AND t.status = 'failed' RETURNING ${SNAPSHOT_COLUMNS}
      ), forgotten AS (
        DELETE FROM ${s}.task_step_attempts a USING u
        WHERE a.task_id = u.id
          AND NOT EXISTS (SELECT 1 FROM ${s}.task_steps st WHERE st.task_id = u.id AND st.name = a.name)
      ) SELECT u.*, ${notify('u.id', 'true', 'false')} FROM u`,

    /** A finished task and all it keeps (ON DELETE CASCADE); subscribers hear it and find it gone. */
    purge: `
      WITH d AS (
        DELETE FROM ${s}.tasks WHERE id = $1 AND status IN ('completed','failed','cancelled') RETURNING id
      ) SELECT d.id, ${notify('d.id', 'false', 'false')} FROM d`,
  };
}
