// SQL of the PostgreSQL task store. A run: its claim, its lease and the steps and status messages it writes (fenced by its token).
import {
  CLAIMABLE,
  DUE,
  FAIR_STEP,
  fairPlace,
  FENCED,
  LINE_ORDER,
  OWNER_PRIORITY_ORDER,
  SNAPSHOT_COLUMNS,
  type Notify,
} from './fragments.js';
import { inScope } from './scope.js';

/** How many waits come due a claim gives their new place at most (or as many as it claims, if more). */
export const WOKEN_BATCH = 128;

/** What a run of task `c` replays: its steps in the order done, failed attempts, and every input asked or given. */
const runHistory = (s: string, c: string): string => `
  (SELECT coalesce(json_agg(json_build_array(st.name, st.value)
      ORDER BY st.seq NULLS FIRST, st.name COLLATE "C"), '[]'::json)
    FROM ${s}.task_steps st WHERE st.task_id = ${c}.id) AS steps,
  (SELECT coalesce(json_agg(json_build_array(a.name, a.failed, a.last_failure)), '[]'::json)
    FROM ${s}.task_step_attempts a WHERE a.task_id = ${c}.id) AS attempts,
  (SELECT coalesce(json_agg(json_build_array(i.key, i.answer) ORDER BY i.key COLLATE "C"), '[]'::json)
    FROM ${s}.task_inputs i WHERE i.task_id = ${c}.id) AS inputs`;

/**
 * $1 worker, $2 lease end, $3 now, $4 how many, $5–$8 the ClaimScope (scope.ts, inScope): the first in line
 * (fragments.ts, fairPlace, LINE_ORDER) of the runnable tasks in scope. Up to WOKEN_BATCH waits come due (or $4)
 * join the line first, each taking a new place now as a new task of its owner would (one owner's in wake-up order,
 * then their earlier order); those not claimed become runnable, with one notification for the other replicas.
 * Each owner's turns among the first $4 in line go to its waiting tasks of the highest priority (fragments.ts,
 * OWNER_PRIORITY_ORDER), and its tasks first in line not claimed take the claimed ones' places (moved); the first
 * in line stay locked until the claim commits, so concurrent claimers take the turns behind them. SKIP LOCKED: concurrent claimers each take different rows. A claimed task whose owner was told it waits for a
 * version or for its rate limit (shown-status.ts) no longer does: subscribers are told.
 */
const claimSql = (s: string, notify: Notify): string => `
    WITH woken AS (
      SELECT id, tenant, principal, wake_at, coalesce(fair_at, created_at) AS earlier, created_at, tool,
        tool_version, updated_at FROM ${s}.tasks
      WHERE ${DUE('$3')}
      ORDER BY wake_at
      LIMIT greatest(${WOKEN_BATCH}, $4)
      FOR UPDATE SKIP LOCKED
    ), placed AS (
      SELECT w.id, w.created_at, ${inScope('w', 5)} AS in_scope, ${fairPlace(s, '$3::bigint', 'w.tenant', 'w.principal')}
        + ${FAIR_STEP} * (row_number() OVER (
          PARTITION BY w.tenant, w.principal ORDER BY w.wake_at, w.earlier, w.created_at) - 1) AS fair_at,
        $3::bigint AS placed_at
      FROM woken w
    ), heads AS (
      SELECT id, tenant, principal, fair_at, placed_at, created_at FROM ${s}.tasks t
      WHERE runnable AND ${CLAIMABLE('t', '$3')} AND ${inScope('t', 5)}
      ORDER BY ${LINE_ORDER}
      LIMIT $4
      FOR UPDATE SKIP LOCKED
    ), turns AS (
      SELECT tenant, principal, count(*) AS n FROM heads GROUP BY tenant, principal
    ), ready AS (
      SELECT b.* FROM turns o CROSS JOIN LATERAL (
        SELECT id, tenant, principal, lease_owner, lease_until, fair_at, placed_at, created_at FROM ${s}.tasks t
        WHERE t.runnable AND t.tenant = o.tenant AND t.principal = o.principal AND ${CLAIMABLE('t', '$3')}
          AND ${inScope('t', 5)}
        ORDER BY ${OWNER_PRIORITY_ORDER}
        LIMIT o.n
        FOR UPDATE SKIP LOCKED
      ) b
    ), candidate AS (
      SELECT * FROM (
        SELECT id, tenant, principal, lease_owner, lease_until, fair_at, placed_at, created_at FROM ready
        UNION ALL SELECT id, NULL, NULL, NULL, NULL, fair_at, placed_at, created_at FROM placed WHERE in_scope
      ) x ORDER BY ${LINE_ORDER} LIMIT $4
    ), vacated AS (
      SELECT c.id, c.tenant, c.principal, c.fair_at,
        row_number() OVER (PARTITION BY c.tenant, c.principal ORDER BY ${LINE_ORDER}) AS n
      FROM candidate c WHERE c.tenant IS NOT NULL AND c.id NOT IN (SELECT id FROM heads)
    ), passed AS (
      SELECT h.id, h.tenant, h.principal,
        row_number() OVER (PARTITION BY h.tenant, h.principal ORDER BY ${LINE_ORDER}) AS n
      FROM heads h WHERE h.id NOT IN (SELECT id FROM candidate)
    ), moved AS (
      UPDATE ${s}.tasks t SET fair_at = v.fair_at, revision = t.revision + 1
      FROM passed p JOIN vacated v ON v.tenant = p.tenant AND v.principal = p.principal AND v.n = p.n
      WHERE t.id = p.id
    ), claimed AS (
      UPDATE ${s}.tasks t SET lease_owner = $1, lease_until = $2, attempt = t.attempt + 1, runnable = true,
        wake_at = NULL, fair_at = c.fair_at, placed_at = c.placed_at, revision = t.revision + 1, child_ended = NULL,
        status_message = CASE WHEN t.attempt = 0 AND t.debounce_key IS NOT NULL THEN NULL ELSE t.status_message END
      FROM candidate c WHERE t.id = c.id
      RETURNING t.*, c.lease_owner AS previous_owner, c.lease_until AS previous_until
    ), requeued AS (
      UPDATE ${s}.tasks t SET runnable = true, wake_at = NULL, fair_at = p.fair_at, placed_at = p.placed_at,
        revision = t.revision + 1
      FROM placed p WHERE t.id = p.id AND p.id NOT IN (SELECT id FROM candidate)
      RETURNING t.id
    ), announced AS (
      SELECT ${notify('r.id', 'true', 'false')} FROM (SELECT id FROM requeued LIMIT 1) r
    ), unmarked AS (
      SELECT ${notify('m.id', 'false', 'false')} FROM claimed m WHERE m.version_wait = m.attempt - 1
        OR (m.attempt = 1 AND m.rate_key IS NOT NULL AND m.rate_reserved_at IS NOT NULL)
        OR (m.attempt = 1 AND m.debounce_key IS NOT NULL)
    )
    SELECT c.*, ${runHistory(s, 'c')}, (SELECT count(*) FROM unmarked) AS unmarked
    FROM claimed c LEFT JOIN announced ON true`;

/** `s`: the quoted schema name. */
export function runSql(s: string, notify: Notify) {
  return {
    /** The claim (claimSql). */
    claim: claimSql(s, notify),

    /**
     * $3 the new lease end, $4 now. A run waiting for live input (live-input.ts) keeps its lease too. A lapsed lease
     * of a task that holds a slot of a concurrency key only while a run holds its lease (hold 'run') is lost: that
     * slot counted as free since it lapsed, and may have gone to another run.
     */
    renew: `
      UPDATE ${s}.tasks SET lease_until = $3, revision = revision + 1
      WHERE id = $1 AND attempt = $2 AND status IN ('working','input_required') AND lease_owner IS NOT NULL
        AND (concurrency_key IS NULL OR concurrency_hold = 'task' OR lease_until >= $4::bigint)
      RETURNING cancel_requested`,

    /**
     * $3 name, $4 value, $5 when its attempt started (null: unknown), $6 now. FOR SHARE holds off a takeover until
     * the step is written; a stale token finds no row.
     */
    saveStep: `
      WITH held AS (SELECT id FROM ${s}.tasks WHERE ${FENCED} FOR SHARE)
      INSERT INTO ${s}.task_steps (task_id, name, value, seq, started_at, saved_at)
      SELECT id, $3, $4, (SELECT coalesce(max(seq), 0) + 1 FROM ${s}.task_steps WHERE task_id = held.id),
        $5::bigint, $6::bigint FROM held
      ON CONFLICT (task_id, name) DO UPDATE SET value = EXCLUDED.value, started_at = EXCLUDED.started_at,
        saved_at = EXCLUDED.saved_at
      RETURNING 1 AS saved`,

    /**
     * saveStep under the byte quota, $7 the limit: the value is written only if the bytes the task's owner stores
     * (the shards of owner_bytes) and its own stay within it. A row back: the lease is held; `saved`: it was written.
     */
    saveStepWithin: `
      WITH held AS (SELECT id, tenant, principal FROM ${s}.tasks WHERE ${FENCED} FOR SHARE),
      room AS (
        SELECT h.id, (SELECT coalesce(sum(o.bytes), 0) FROM ${s}.owner_bytes o
          WHERE o.tenant = h.tenant AND o.principal = h.principal)::bigint AS stored
        FROM held h
      ), saved AS (
        INSERT INTO ${s}.task_steps (task_id, name, value, seq, started_at, saved_at)
        SELECT id, $3, $4, (SELECT coalesce(max(seq), 0) + 1 FROM ${s}.task_steps WHERE task_id = room.id),
          $5::bigint, $6::bigint FROM room WHERE room.stored + octet_length($4) <= $7::bigint
        ON CONFLICT (task_id, name) DO UPDATE SET value = EXCLUDED.value, started_at = EXCLUDED.started_at,
          saved_at = EXCLUDED.saved_at
        RETURNING 1
      ) SELECT (SELECT count(*) FROM saved)::int AS saved FROM room`,

    /** $3 name, $4 failed attempts so far, $5 the last failure, $6 now. Fenced like saveStep. */
    saveStepFailure: `
      WITH held AS (SELECT id FROM ${s}.tasks WHERE ${FENCED} FOR SHARE)
      INSERT INTO ${s}.task_step_attempts (task_id, name, failed, last_failure, updated_at)
      SELECT id, $3, $4, $5, $6 FROM held
      ON CONFLICT (task_id, name) DO UPDATE SET failed = EXCLUDED.failed, last_failure = EXCLUDED.last_failure,
        updated_at = EXCLUDED.updated_at
      RETURNING 1 AS saved`,

    /** $3 message, $4 now, $5 the progress shown (null: keep the one shown last). */
    setStatusMessage: `
      WITH u AS (
        UPDATE ${s}.tasks SET status_message = $3, updated_at = $4, progress = coalesce($5, progress),
          revision = revision + 1 WHERE ${FENCED}
        RETURNING ${SNAPSHOT_COLUMNS}
      ) SELECT u.*, ${notify('u.id', 'false', 'false')} FROM u`,
  };
}
