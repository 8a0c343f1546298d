// SQL of the PostgreSQL task store. Creation: the multi-row insert, the idempotency keys it may find taken, and the
// holders of debounce keys.
import { FAIR_STEP, fairPlace, SNAPSHOT_COLUMNS, type Notify } from './fragments.js';

/** The creation-time answers of a batch's tasks ($31 task ids, $32 keys, $33 answers, $34 times). */
const ANSWERS = (s: string): string => `, answers AS (
        INSERT INTO ${s}.task_inputs (task_id, key, request, answer, asked_at, answered_at)
        SELECT task_id, key, NULL, answer, at, at
        FROM unnest($31::text[], $32::text[], $33::text[], $34::bigint[]) AS a(task_id, key, answer, at)
        WHERE NOT EXISTS (SELECT 1 FROM over)
      )`;

/**
 * The multi-row insert of a batch. Each task takes its fair place in line (fragments.ts, fairPlace) at its creation
 * time, and the tasks of one owner in one batch one behind the other.
 *
 * The byte quota in the same statement ($28 each task's limit, $29 the bytes it adds, $30 what this instance's
 * batches in flight add for its owner; null when it has none): when every task of the batch fits, its owner's tasks
 * one after the other on top of the count the owner stores (migration 17), the batch is inserted; otherwise none of
 * it is, and the caller admits its tasks one by one after reading the counts (creations.ts, byteQuota), as it did
 * before this check. So a batch whose tasks fit, the usual case, costs one statement instead of a read and an insert.
 *
 * A task whose idempotency key another task of its owner and tool holds fails the statement with a unique violation
 * of tasks_idempotency (KEY_INDEX); the caller then inserts the batch's tasks one by one and resolves that one with
 * `keyed`. (No ON CONFLICT clause: its speculative insertion would cost every creation.) It returns only what the new
 * tasks' snapshots are built from, and their sealed flag: the arguments and the rest of each row would be sent back
 * and decoded for nothing.
 */
function insertTasks(s: string, notify: Notify, answers: boolean): string {
  return `
      WITH input AS (
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
          $7::bigint[], $8::bigint[], $9::bigint[], $10::boolean[], $11::text[], $12::boolean[], $13::text[], $14::text[],
          $15::text[], $16::integer[], $17::text[], $18::integer[], $19::text[], $20::integer[], $21::bigint[],
          $22::text[], $23::bigint[], $24::text[], $25::text[], $26::text[], $27::boolean[], $28::bigint[],
          $29::bigint[], $30::bigint[])
          WITH ORDINALITY AS x(id, tenant, principal, tool, args, status_message, created_at, ttl_ms, poll_interval_ms,
            replay_after_crash, client_caps, sealed, idempotency_key, tool_version, concurrency_key, concurrency_limit,
            concurrency_hold, priority, rate_key, rate_limit, rate_period_ms, debounce_key, wake_at, trace_parent,
            trace_state, parent_id, detached, bytes_limit, adding, pending, ord)
      ), held AS (
        SELECT w.tenant, w.principal, coalesce((SELECT sum(o.bytes) FROM ${s}.owner_bytes o
          WHERE o.tenant = w.tenant AND o.principal = w.principal), 0) AS n
        FROM (SELECT DISTINCT tenant, principal FROM input WHERE bytes_limit IS NOT NULL) w
      ), over AS (
        SELECT 1
        FROM (SELECT tenant, principal, bytes_limit,
            pending + sum(adding) OVER (PARTITION BY tenant, principal ORDER BY ord) AS total
          FROM input WHERE bytes_limit IS NOT NULL) c
        JOIN held h ON h.tenant = c.tenant AND h.principal = c.principal
        WHERE h.n + c.total > c.bytes_limit
      ), admitted AS (
        SELECT * FROM input WHERE NOT EXISTS (SELECT 1 FROM over)
      ), placed AS (
        SELECT input.*, ${fairPlace(s, 'input.created_at', 'input.tenant', 'input.principal')}
          + ${FAIR_STEP} * (row_number() OVER (PARTITION BY input.tenant, input.principal ORDER BY input.ord) - 1)
          AS fair_at, input.created_at AS placed_at
        FROM admitted input
      ), inserted AS (
        INSERT INTO ${s}.tasks (id, tenant, principal, tool, args, status, status_message, created_at, updated_at,
          ttl_ms, poll_interval_ms, expires_at, replay_after_crash, client_caps, runnable, sealed, idempotency_key,
          fair_at, placed_at, tool_version, created_message, concurrency_key, concurrency_limit, concurrency_hold,
          priority, rate_key, rate_limit, rate_period_ms, debounce_key, wake_at, trace_parent, trace_state,
          parent_id, detached)
        SELECT id, tenant, principal, tool, args, 'working', status_message, created_at, created_at, ttl_ms,
          poll_interval_ms, created_at + ttl_ms, replay_after_crash, client_caps::jsonb, wake_at IS NULL, sealed,
          idempotency_key, fair_at, placed_at, tool_version, coalesce(status_message, ''), concurrency_key,
          concurrency_limit, concurrency_hold, priority, rate_key, rate_limit, rate_period_ms, debounce_key, wake_at,
          trace_parent, trace_state, parent_id, detached
        FROM placed
        ORDER BY ord
        RETURNING ${SNAPSHOT_COLUMNS}, sealed
      )${answers ? ANSWERS(s) : ''}
      SELECT inserted.*, ${notify('inserted.id', 'true', 'false')} FROM inserted`;
}

/** `s`: the quoted schema name. */
export function creationSql(s: string, notify: Notify) {
  return {
    /**
     * Parameters are parallel arrays (one element per task; the quota's may be empty: unnest pads them with nulls),
     * then, in `insertTasksWithAnswers`, parallel arrays of creation-time answers ($31–$34). A batch without answers runs `insertTasks`, which has no insert into
     * task_inputs: that insert would run its statement-level trigger for no row in every batch.
     */
    insertTasks: insertTasks(s, notify, false),
    insertTasksWithAnswers: insertTasks(s, notify, true),

    /** $1 tenant, $2 principal, $3 tool, $4 key: the task holding the key, as getOwned reads it, with its arguments. */
    /** Serializes, until commit, the creations of one owner that count its unfinished tasks. */
    lockOwner: `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`,

    keyed: `
      SELECT t.*, CASE WHEN t.status = 'input_required' THEN (
          SELECT json_agg(json_build_array(i.key, i.request) ORDER BY i.asked_at, i.key COLLATE "C")
          FROM ${s}.task_inputs i WHERE i.task_id = t.id AND i.answer IS NULL AND NOT i.superseded
        ) END AS outstanding
      FROM ${s}.tasks t
      WHERE t.tenant = $1 AND t.principal = $2 AND t.tool = $3 AND t.idempotency_key = $4`,

    /** Frees the key of a task past its TTL ($2 now) for a new task. */
    releaseKey: `
      UPDATE ${s}.tasks SET idempotency_key = NULL, revision = revision + 1
      WHERE id = $1 AND expires_at IS NOT NULL AND expires_at <= $2 RETURNING id`,

    isSealed: `SELECT sealed FROM ${s}.tasks WHERE id = $1`,
  };
}

/** Debounce keys (migration 26, ../../core/debounce.ts): a key's holder, its release, and replaced arguments. */
export function debounceSql(s: string, notify: Notify) {
  return {
    /** $1 tenant, $2 principal, $3 tool, $4 debounce key: the task holding it. */
    debounceHolder: `
      SELECT t.*, NULL AS outstanding FROM ${s}.tasks t
      WHERE t.tenant = $1 AND t.principal = $2 AND t.tool = $3 AND t.debounce_key = $4`,

    /** Takes debounce key $2 from task $1, which started, ended or whose window closed, for a new task. */
    releaseDebounce: `
      UPDATE ${s}.tasks SET debounce_key = NULL, revision = revision + 1 WHERE id = $1 AND debounce_key = $2`,

    /**
     * Gives pending task $1 (holding debounce key $2) arguments $3 and status message $4 ($5 now). Its conditions are
     * those of a pending task: a claim (or its wait's end) that took the row first cleared wake_at and counted an
     * attempt; one that comes while this holds the row skips it (SKIP LOCKED) and takes it later, with these
     * arguments. No row: it started.
     */
    replaceArgs: `
      WITH u AS (
        UPDATE ${s}.tasks SET args = $3, status_message = $4, updated_at = greatest(updated_at, $5),
          revision = revision + 1
        WHERE id = $1 AND debounce_key = $2 AND status = 'working' AND attempt = 0 AND wake_at > $5
          AND (expires_at IS NULL OR expires_at > $5)
        RETURNING *
      ) SELECT u.*, NULL AS outstanding, ${notify('u.id', 'false', 'false')} FROM u`,
  };
}
