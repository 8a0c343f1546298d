// SQL of the PostgreSQL task store. The owner's writes: answers and cancellation, under the task's row lock.
import { PARENT_WOKEN, WAKE_PARENT } from './children.js';
import { fairPlace, NON_TERMINAL, OWNED_BY, SNAPSHOT_COLUMNS, type Notify } from './fragments.js';

/** `s`: the quoted schema name. */
export function ownerWriteSql(s: string, notify: Notify) {
  return {
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

    /**
     * $2 now, $3 resumed: a task all of whose input is answered is runnable again, at a new place in line
     * (fragments.ts, fairPlace), $4 its status message then.
     */
    touchAfterAnswer: `
      WITH u AS (
        UPDATE ${s}.tasks t SET updated_at = $2::bigint,
          status = CASE WHEN $3::boolean THEN 'working' ELSE t.status END,
          status_message = CASE WHEN $3::boolean THEN $4::text ELSE t.status_message END,
          runnable = CASE WHEN $3::boolean THEN true ELSE t.runnable END,
          fair_at = CASE WHEN $3::boolean THEN ${fairPlace(s, '$2::bigint', 't.tenant', 't.principal')}
            ELSE t.fair_at END,
          placed_at = CASE WHEN $3::boolean THEN $2::bigint ELSE t.placed_at END,
          revision = t.revision + 1
        WHERE t.id = $1 RETURNING ${SNAPSHOT_COLUMNS}
      ) SELECT u.*, ${notify('u.id', '$3::boolean', 'false')} FROM u`,

    flagCancel: `
      WITH u AS (UPDATE ${s}.tasks SET cancel_requested = true, revision = revision + 1 WHERE id = $1 RETURNING id)
      SELECT ${notify('u.id', 'false', 'true')} FROM u`,

    cancelNow: `
      WITH u AS (
        UPDATE ${s}.tasks SET status = 'cancelled', cancel_requested = true, runnable = false,
          lease_owner = NULL, lease_until = NULL, wake_at = NULL, status_message = 'Task was cancelled.',
          updated_at = $2, revision = revision + 1
        WHERE id = $1 AND ${NON_TERMINAL} RETURNING ${SNAPSHOT_COLUMNS}, parent_id
      ), woke AS (${WAKE_PARENT(s, 'u', '$2::bigint')})
      SELECT u.*, ${notify('u.id', 'false', 'true')}, ${PARENT_WOKEN(notify)} FROM u`,
  };
}
