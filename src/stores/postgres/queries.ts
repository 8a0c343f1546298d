// SQL text of the PostgreSQL task store. Every write after a claim is fenced by the attempt number and a held
// lease; writes that change a task also pg_notify in the same statement, so the notice is sent only on commit.
// Every UPDATE of a task bumps its revision.
import pg from 'pg';
import type { SchemaNames } from './names.js';

const NON_TERMINAL = `status IN ('working','input_required')`;
/** A waiting task whose time ($3) has come: claimable like a runnable one (it released its lease to wait). */
const DUE = (now: string): string =>
  `wake_at IS NOT NULL AND wake_at <= ${now} AND status = 'working' AND (expires_at IS NULL OR expires_at > ${now})`;
/** The fence: the run holding `token` still owns a lease on a working task. */
const FENCED = `id = $1 AND attempt = $2 AND status = 'working' AND lease_owner IS NOT NULL`;

/**
 * What a statement that commits a change returns so the change can carry the task's snapshot (TaskChange.committed;
 * rows.ts SnapshotColumns): the row as the statement left it.
 */
const SNAPSHOT_COLUMNS = `id, status, status_message, created_at, updated_at, ttl_ms, poll_interval_ms, expires_at,
  result, error, revision`;

/**
 * The owner test of a lookup by id ($2 tenant, $3 principal). Written as `(…) IS TRUE` (the columns are NOT NULL,
 * so it means the same) so that the planner cannot serve it from the owner-prefixed listing index: with the
 * statistics of a table that grew quickly (autovacuum has not analysed it yet) it otherwise picked that index
 * over the primary key and read every task of the owner for each lookup.
 */
const OWNED_BY = (alias: string): string => `(${alias}tenant = $2 AND ${alias}principal = $3) IS TRUE`;

/** The unique index of idempotency keys (migration 7): a violation of it means "this key is taken". */
export const KEY_INDEX = 'tasks_idempotency';

export function buildQueries({ quoted: s, channel }: SchemaNames, origin: string) {
  // Channel and origin are fixed per store instance (a validated name and random hex): inlined as literals.
  const notify = (id: string, runnable: string, cancel: string): string =>
    `pg_notify(${pg.escapeLiteral(channel)}, json_build_object('origin', ${pg.escapeLiteral(origin)}, ` +
    `'taskId', ${id}, 'runnable', ${runnable}, 'cancelRequested', ${cancel})::text) AS notified`;

  return {
    /** Parameters are parallel arrays (one element per task), then parallel arrays of creation-time answers. */
    /**
     * A task whose idempotency key another task of its owner and tool holds fails the statement with a unique
     * violation of tasks_idempotency (KEY_INDEX); the caller then inserts the batch's tasks one by one and resolves
     * that one with `keyed`. (No ON CONFLICT clause: its speculative insertion would cost every creation.)
     */
    insertTasks: `
      WITH input AS (
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
          $7::bigint[], $8::bigint[], $9::bigint[], $10::boolean[], $11::text[], $12::boolean[], $17::text[])
          AS x(id, tenant, principal, tool, args, status_message, created_at, ttl_ms, poll_interval_ms,
            replay_after_crash, client_caps, sealed, idempotency_key)
      ), inserted AS (
        INSERT INTO ${s}.tasks (id, tenant, principal, tool, args, status, status_message, created_at, updated_at,
          ttl_ms, poll_interval_ms, expires_at, replay_after_crash, client_caps, runnable, sealed, idempotency_key)
        SELECT id, tenant, principal, tool, args, 'working', status_message, created_at, created_at, ttl_ms,
          poll_interval_ms, created_at + ttl_ms, replay_after_crash, client_caps::jsonb, true, sealed, idempotency_key
        FROM input
        RETURNING *
      ), answers AS (
        INSERT INTO ${s}.task_inputs (task_id, key, request, answer, asked_at, answered_at)
        SELECT task_id, key, NULL, answer, at, at
        FROM unnest($13::text[], $14::text[], $15::text[], $16::bigint[]) AS a(task_id, key, answer, at)
      )
      SELECT inserted.*, ${notify('inserted.id', 'true', 'false')} FROM inserted`,

    /** One statement, one snapshot: the task and, while it waits for input, its outstanding requests. */
    getOwned: `
      SELECT t.*, CASE WHEN t.status = 'input_required' THEN (
          SELECT json_agg(json_build_array(i.key, i.request) ORDER BY i.asked_at, i.key COLLATE "C")
          FROM ${s}.task_inputs i WHERE i.task_id = t.id AND i.answer IS NULL AND NOT i.superseded
        ) END AS outstanding
      FROM ${s}.tasks t WHERE t.id = $1 AND ${OWNED_BY('t.')}`,

    /**
     * $1 worker, $2 lease end, $3 now, $4 how many: the oldest (by creation) of the runnable tasks and of the waiting
     * ones whose time has come. SKIP LOCKED: concurrent claimers each take different rows.
     */
    claim: `
      WITH ready AS (
        SELECT id, lease_owner, created_at FROM ${s}.tasks
        WHERE runnable AND (lease_owner IS NULL OR lease_until < $3) AND (expires_at IS NULL OR expires_at > $3)
        ORDER BY created_at
        LIMIT $4
        FOR UPDATE SKIP LOCKED
      ), due AS (
        SELECT id, lease_owner, created_at FROM ${s}.tasks
        WHERE ${DUE('$3')}
        ORDER BY wake_at
        LIMIT $4
        FOR UPDATE SKIP LOCKED
      ), candidate AS (
        SELECT * FROM (SELECT * FROM ready UNION ALL SELECT * FROM due) x ORDER BY created_at LIMIT $4
      ), claimed AS (
        UPDATE ${s}.tasks t SET lease_owner = $1, lease_until = $2, attempt = t.attempt + 1,
          runnable = true, wake_at = NULL, revision = t.revision + 1
        FROM candidate c WHERE t.id = c.id
        RETURNING t.*, c.lease_owner AS previous_owner
      )
      SELECT c.*,
        (SELECT coalesce(json_agg(json_build_array(st.name, st.value)), '[]'::json)
          FROM ${s}.task_steps st WHERE st.task_id = c.id) AS steps,
        (SELECT coalesce(json_agg(json_build_array(a.name, a.failed, a.last_failure)), '[]'::json)
          FROM ${s}.task_step_attempts a WHERE a.task_id = c.id) AS attempts,
        (SELECT coalesce(json_agg(json_build_array(i.key, i.answer) ORDER BY i.key COLLATE "C"), '[]'::json)
          FROM ${s}.task_inputs i WHERE i.task_id = c.id) AS inputs
      FROM claimed c`,

    renew: `
      UPDATE ${s}.tasks SET lease_until = $3, revision = revision + 1 WHERE ${FENCED} RETURNING cancel_requested`,

    /** FOR SHARE holds off a takeover until the step is written; a stale token finds no row. */
    saveStep: `
      WITH held AS (SELECT id FROM ${s}.tasks WHERE ${FENCED} FOR SHARE)
      INSERT INTO ${s}.task_steps (task_id, name, value) SELECT id, $3, $4 FROM held
      ON CONFLICT (task_id, name) DO UPDATE SET value = EXCLUDED.value
      RETURNING 1 AS saved`,

    /** $3 name, $4 failed attempts so far, $5 the last failure, $6 now. Fenced like saveStep. */
    saveStepFailure: `
      WITH held AS (SELECT id FROM ${s}.tasks WHERE ${FENCED} FOR SHARE)
      INSERT INTO ${s}.task_step_attempts (task_id, name, failed, last_failure, updated_at)
      SELECT id, $3, $4, $5, $6 FROM held
      ON CONFLICT (task_id, name) DO UPDATE SET failed = EXCLUDED.failed, last_failure = EXCLUDED.last_failure,
        updated_at = EXCLUDED.updated_at
      RETURNING 1 AS saved`,

    /** $1 tenant, $2 principal, $3 tool, $4 key: the task holding the key, as getOwned reads it, with its arguments. */
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

    /** $1 now: the earliest wake-up still to come. */
    nextWake: `
      SELECT wake_at FROM ${s}.tasks WHERE wake_at IS NOT NULL AND wake_at > $1 AND status = 'working'
      ORDER BY wake_at LIMIT 1`,

    /** Everything about one task, whoever owns it (operators). */
    inspect: `
      SELECT t.*,
        (SELECT coalesce(json_agg(st.name), '[]'::json) FROM ${s}.task_steps st WHERE st.task_id = t.id) AS step_names,
        (SELECT coalesce(json_agg(json_build_array(a.name, a.failed, a.last_failure)), '[]'::json)
          FROM ${s}.task_step_attempts a WHERE a.task_id = t.id) AS attempts
      FROM ${s}.tasks t WHERE t.id = $1`,

    setStatusMessage: `
      WITH u AS (
        UPDATE ${s}.tasks SET status_message = $3, updated_at = $4, revision = revision + 1 WHERE ${FENCED}
        RETURNING ${SNAPSHOT_COLUMNS}
      ) SELECT u.*, ${notify('u.id', 'false', 'false')} FROM u`,

    /** $3 status, $4 result, $5 error, $6 status message (null keeps it), $7 now, $8 failure. */
    terminal: `
      WITH u AS (
        UPDATE ${s}.tasks SET status = $3, result = $4, error = $5, status_message = COALESCE($6, status_message),
          updated_at = $7, failure = $8, runnable = false, lease_owner = NULL, lease_until = NULL, wake_at = NULL,
          revision = revision + 1
        WHERE ${FENCED} RETURNING ${SNAPSHOT_COLUMNS}
      ) SELECT u.*, ${notify('u.id', 'false', 'false')} FROM u`,

    /**
     * Waits without a lease until $3 ($4 status message, $5 now); a cancel requested during the run ends the task
     * cancelled instead.
     */
    wait: `
      WITH u AS (
        UPDATE ${s}.tasks SET
          status = CASE WHEN cancel_requested THEN 'cancelled' ELSE status END,
          status_message = CASE WHEN cancel_requested THEN 'Task was cancelled.' ELSE $4 END,
          wake_at = CASE WHEN cancel_requested THEN NULL ELSE $3::bigint END,
          updated_at = $5, runnable = false, lease_owner = NULL, lease_until = NULL, revision = revision + 1
        WHERE ${FENCED} RETURNING ${SNAPSHOT_COLUMNS}
      ) SELECT u.*, ${notify('u.id', 'false', 'false')} FROM u`,

    release: `
      WITH u AS (
        UPDATE ${s}.tasks SET lease_owner = NULL, lease_until = NULL, revision = revision + 1 WHERE ${FENCED}
        RETURNING id
      ) SELECT ${notify('u.id', 'true', 'false')} FROM u`,

    /**
     * Suspends for input in one statement: $3 status message, $4 now, $5 keys, $6 requests. A key asked again
     * while unanswered is reopened; earlier unanswered keys this suspension no longer asks are superseded. A
     * cancel requested meanwhile ends the task cancelled instead.
     */
    suspend: `
      WITH u AS (
        UPDATE ${s}.tasks SET
          status = CASE WHEN cancel_requested THEN 'cancelled' ELSE 'input_required' END,
          status_message = COALESCE($3, status_message), updated_at = $4,
          runnable = false, lease_owner = NULL, lease_until = NULL, revision = revision + 1
        WHERE ${FENCED} RETURNING id
      ), asked AS (
        INSERT INTO ${s}.task_inputs AS i (task_id, key, request, asked_at)
        SELECT u.id, r.key, r.request, $4 FROM u, unnest($5::text[], $6::text[]) AS r(key, request)
        ON CONFLICT (task_id, key) DO UPDATE SET superseded = false WHERE i.answer IS NULL
      ), superseded AS (
        UPDATE ${s}.task_inputs i SET superseded = true FROM u
        WHERE i.task_id = u.id AND i.answer IS NULL AND NOT i.superseded AND i.key <> ALL ($5::text[])
      ) SELECT ${notify('u.id', 'false', 'false')} FROM u`,

    /** Row lock for answer and requestCancel: concurrent terminal writes wait for, then re-check, this one. */
    lockOwned: `
      SELECT status, expires_at, lease_owner, lease_until, sealed FROM ${s}.tasks
      WHERE id = $1 AND ${OWNED_BY('')} FOR UPDATE`,

    /** $2 now, $3 keys, $4 answers; reports how many were answered and how many were open before. */
    answerInputs: `
      WITH answered AS (
        UPDATE ${s}.task_inputs i SET answer = r.answer, answered_at = $2
        FROM unnest($3::text[], $4::text[]) AS r(key, answer)
        WHERE i.task_id = $1 AND i.key = r.key AND i.answer IS NULL AND NOT i.superseded
        RETURNING i.key
      ) SELECT (SELECT count(*) FROM answered)::int AS answered,
        (SELECT count(*) FROM ${s}.task_inputs
          WHERE task_id = $1 AND answer IS NULL AND NOT superseded)::int AS open_before`,

    /** $2 now, $3 resumed. */
    touchAfterAnswer: `
      WITH u AS (
        UPDATE ${s}.tasks SET updated_at = $2,
          status = CASE WHEN $3::boolean THEN 'working' ELSE status END,
          runnable = CASE WHEN $3::boolean THEN true ELSE runnable END, revision = revision + 1
        WHERE id = $1 RETURNING ${SNAPSHOT_COLUMNS}
      ) SELECT u.*, ${notify('u.id', '$3::boolean', 'false')} FROM u`,

    flagCancel: `
      WITH u AS (UPDATE ${s}.tasks SET cancel_requested = true, revision = revision + 1 WHERE id = $1 RETURNING id)
      SELECT ${notify('u.id', 'false', 'true')} FROM u`,

    cancelNow: `
      WITH u AS (
        UPDATE ${s}.tasks SET status = 'cancelled', cancel_requested = true, runnable = false,
          lease_owner = NULL, lease_until = NULL, wake_at = NULL, updated_at = $2, revision = revision + 1
        WHERE id = $1 AND ${NON_TERMINAL} RETURNING ${SNAPSHOT_COLUMNS}
      ) SELECT u.*, ${notify('u.id', 'false', 'true')} FROM u`,

    /**
     * $1 error, $2 now. SKIP LOCKED: rows another replica is expiring (or a run is finishing) right now are left
     * to that writer or the next sweep, and two sweepers never deadlock on each other's row order.
     */
    expire: `
      WITH due AS (
        SELECT id FROM ${s}.tasks
        WHERE expires_at IS NOT NULL AND expires_at <= $2 AND ${NON_TERMINAL}
        FOR UPDATE SKIP LOCKED
      ), e AS (
        UPDATE ${s}.tasks t SET status = 'failed', error = $1, status_message = 'Task expired before it finished.',
          updated_at = $2, runnable = false, lease_owner = NULL, lease_until = NULL, wake_at = NULL,
          revision = t.revision + 1
        FROM due WHERE t.id = due.id RETURNING t.id
      ) SELECT e.id, ${notify('e.id', 'false', 'true')} FROM e`,

    purge: `
      WITH d AS (
        DELETE FROM ${s}.tasks WHERE id IN (
          SELECT id FROM ${s}.tasks WHERE expires_at IS NOT NULL AND expires_at <= $1 FOR UPDATE SKIP LOCKED
        ) RETURNING 1
      ) SELECT count(*)::int AS n FROM d`,

    isSealed: `SELECT sealed FROM ${s}.tasks WHERE id = $1`,

    countActive: `
      SELECT count(*)::int AS n FROM ${s}.tasks WHERE tenant = $1 AND principal = $2 AND ${NON_TERMINAL}`,

    /**
     * One statement, one snapshot: counts by status (index-only scans of tasks_status, not a scan of the table) and
     * the runnable backlog at $1 (tasks_runnable).
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

export type Queries = ReturnType<typeof buildQueries>;
