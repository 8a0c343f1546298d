// SQL of the PostgreSQL task store. The operators' port: searches (built per set of filters), a task's owner by id,
// its payload columns, a retry's new task and purge under the task's row lock, and the overview's counts.
import { adminCountSql, adminSearchSql, type AdminDialect, type CheckedQuery } from '../../admin-query.js';
import type { AdminTaskFilter } from '../../../tasks/admin.js';
import { fairPlace, NON_TERMINAL, type Notify } from './fragments.js';

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
  toolError: 'tool_error',
  noToolError: 'NOT tool_error',
  toolErrorContains(params, needle) {
    params.push(needle.toLowerCase());
    const n = `$${params.length}`;
    return `(strpos(lower(CASE WHEN left(failure, 1) = '{' THEN failure::jsonb ->> 'message' END), ${n}) > 0
      OR EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN left(result, 1) = '{'
          AND jsonb_typeof(result::jsonb -> 'content') = 'array' THEN result::jsonb -> 'content' END) c
        WHERE strpos(lower(c ->> 'text'), ${n}) > 0))`;
  },
};

/** The statement and parameters of one page of a search within `tenants` (undefined: any); undefined: no match. */
export const searchSql = (s: string, tenants: readonly string[] | undefined, q: CheckedQuery) =>
  adminSearchSql(dialect, `${s}.tasks`, tenants, q);

/** The statement and parameters counting the matches of a filter within `tenants`, up to `max`; undefined: none. */
export const countSql = (
  s: string,
  tenants: readonly string[] | undefined,
  f: AdminTaskFilter,
  max: number,
) => adminCountSql(dialect, `${s}.tasks`, tenants, f, max);

/** The overview's counts; `scoped`: the tenants are the last parameter. */
function overviewSql(s: string, scoped: boolean) {
  const within = (n: number): string => (scoped ? `tenant = ANY($${n}::text[]) AND` : '');
  return {
    byTool: `
      SELECT tool, tool_version, status, tool_error, count(*)::int AS n FROM ${s}.tasks
      ${scoped ? 'WHERE tenant = ANY($1::text[])' : ''}
      GROUP BY tool, tool_version, status, tool_error ORDER BY tool, tool_version, status`,
    /** $1 since (exclusive), $2 now. */
    window: `
      SELECT
        (SELECT count(*) FROM ${s}.tasks WHERE ${within(3)} created_at > $1 AND created_at <= $2)::int AS created,
        (SELECT count(*) FROM ${s}.tasks
          WHERE ${within(3)} status = 'completed' AND updated_at > $1 AND updated_at <= $2)::int AS completed,
        (SELECT count(*) FROM ${s}.tasks
          WHERE ${within(3)} status = 'failed' AND updated_at > $1 AND updated_at <= $2)::int AS failed,
        (SELECT count(*) FROM ${s}.tasks
          WHERE ${within(3)} tool_error AND updated_at > $1 AND updated_at <= $2)::int AS "toolErrors"`,
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

    /** A step's stored value and its task's tenant. */
    stepValue: `SELECT t.tenant, s.value FROM ${s}.task_steps s JOIN ${s}.tasks t ON t.id = s.task_id
      WHERE s.task_id = $1 AND s.name = $2`,

    /**
     * The row lock of retry and purge: a run's ending or an owner's write waits for, then re-checks, this one (and a
     * purge does not take a task while a retry copies it).
     */
    lock: `SELECT tenant, principal, status FROM ${s}.tasks WHERE id = $1 FOR UPDATE`,

    /** What a retry copies of a task: its row, its finished steps (in the order done) and its answered inputs. */
    forkSource: `
      SELECT t.id, t.status, t.tool_error, t.sealed, t.args, t.client_caps,
        (SELECT coalesce(json_agg(json_build_array(st.name, st.value, st.seq, st.started_at, st.saved_at)
          ORDER BY st.seq NULLS FIRST, st.name COLLATE "C"), '[]'::json)
          FROM ${s}.task_steps st WHERE st.task_id = t.id) AS steps,
        (SELECT coalesce(json_agg(json_build_array(i.key, i.request, i.answer, i.asked_at, i.answered_at)
          ORDER BY i.asked_at, i.key COLLATE "C"), '[]'::json)
          FROM ${s}.task_inputs i WHERE i.task_id = t.id AND i.answer IS NOT NULL) AS inputs
      FROM ${s}.tasks t WHERE t.id = $1`,

    /**
     * A retry's new task, in one statement: $1 the task retried, $2 the new id, $3 arguments, $4 status message,
     * $5 now, $6 client capabilities, $7 sealed; its steps ($8 names, $9 values, $10 seqs, $11 starts, $12 saves) and
     * answered inputs ($13 keys, $14 requests, $15 answers, $16 asked, $17 answered). It takes its fair place in line
     * as a task its owner created now would; workers hear of it at commit.
     */
    insertFork: `
      WITH src AS (SELECT * FROM ${s}.tasks WHERE id = $1), inserted AS (
        INSERT INTO ${s}.tasks (id, tenant, principal, tool, args, status, status_message, created_at, updated_at,
          ttl_ms, poll_interval_ms, expires_at, replay_after_crash, client_caps, runnable, sealed, fair_at,
          placed_at, tool_version, created_message, retry_of, concurrency_key, concurrency_limit, concurrency_hold,
          rate_key, rate_limit, rate_period_ms)
        SELECT $2, src.tenant, src.principal, src.tool, $3, 'working', $4, $5::bigint, $5::bigint, src.ttl_ms,
          src.poll_interval_ms, $5::bigint + src.ttl_ms, src.replay_after_crash, $6::jsonb, true, $7,
          ${fairPlace(s, '$5::bigint', 'src.tenant', 'src.principal')}, $5::bigint, src.tool_version, $4, src.id,
          src.concurrency_key, src.concurrency_limit, src.concurrency_hold, src.rate_key, src.rate_limit,
          src.rate_period_ms
        FROM src RETURNING id
      ), steps AS (
        INSERT INTO ${s}.task_steps (task_id, name, value, seq, started_at, saved_at)
        SELECT inserted.id, x.* FROM inserted,
          unnest($8::text[], $9::text[], $10::integer[], $11::bigint[], $12::bigint[]) AS x
      ), inputs AS (
        INSERT INTO ${s}.task_inputs (task_id, key, request, answer, asked_at, answered_at)
        SELECT inserted.id, x.* FROM inserted,
          unnest($13::text[], $14::text[], $15::text[], $16::bigint[], $17::bigint[]) AS x
      ) SELECT inserted.id, ${notify('inserted.id', 'true', 'false')} FROM inserted`,

    /** A finished task and all it keeps (ON DELETE CASCADE); subscribers hear it and find it gone. */
    purge: `
      WITH d AS (
        DELETE FROM ${s}.tasks WHERE id = $1 AND status IN ('completed','failed','cancelled') RETURNING id
      ) SELECT d.id, ${notify('d.id', 'false', 'false')} FROM d`,
  };
}
