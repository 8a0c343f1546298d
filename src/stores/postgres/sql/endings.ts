// SQL of the PostgreSQL task store. How a run ends: terminal, waiting, released or suspended for input (fenced by its token).
import { ASK_INPUTS, FENCED, SNAPSHOT_COLUMNS, type Notify } from './fragments.js';
import { PARENT_WOKEN, WAKE_PARENT } from './children.js';

/** The parent of a run's task that its wait or ask ended cancelled (a cancel requested during the run). */
const ENDED_CANCELLED = `(SELECT parent_id FROM u WHERE status = 'cancelled')`;

/** `s`: the quoted schema name. */
export function endingSql(s: string, notify: Notify) {
  return {
    /**
     * $3 status, $4 result, $5 error, $6 status message (null keeps it), $7 now, $8 failure, $9 whether the result
     * is a tool error, $10 the error's outcome word (error-outcome.ts).
     */
    terminal: `
      WITH u AS (
        UPDATE ${s}.tasks SET status = $3, result = $4, error = $5, status_message = COALESCE($6, status_message),
          updated_at = $7, failure = $8, tool_error = $9, error_outcome = $10, runnable = false, lease_owner = NULL, lease_until = NULL, wake_at = NULL,
          revision = revision + 1
        WHERE ${FENCED} RETURNING ${SNAPSHOT_COLUMNS}, parent_id
      ), woke AS (${WAKE_PARENT(s, 'u', '$7::bigint')})
      SELECT u.*, ${notify('u.id', 'false', 'false')}, ${PARENT_WOKEN(notify)} FROM u`,

    /**
     * Waits without a lease until $3 ($4 status message, $5 now); a cancel requested during the run ends the task
     * cancelled instead. A child that ended during the run (child_ended, children.ts) or an event it waits for that
     * arrived during the run (../outside-events.ts) ends the wait at once: the run may have looked before; the change
     * then says the task is runnable. The task's event rows are locked first: a delivery in flight (which holds its
     * row) commits before, and is seen.
     */
    wait: `
      WITH l AS (SELECT e.state FROM ${s}.outside_events e WHERE e.task_id = $1 FOR SHARE
      ), u AS (
        UPDATE ${s}.tasks SET
          status = CASE WHEN cancel_requested THEN 'cancelled' ELSE status END,
          status_message = CASE WHEN cancel_requested THEN 'Task was cancelled.' ELSE $4 END,
          wake_at = CASE WHEN cancel_requested THEN NULL
            WHEN child_ended OR EXISTS (SELECT 1 FROM l WHERE l.state = 'arrived') THEN least($3::bigint, $5::bigint)
            ELSE $3::bigint END,
          child_ended = NULL, updated_at = $5, runnable = false, lease_owner = NULL, lease_until = NULL,
          revision = revision + 1
        WHERE ${FENCED} RETURNING ${SNAPSHOT_COLUMNS}, parent_id
      ), woke AS (${WAKE_PARENT(s, ENDED_CANCELLED, '$5::bigint')})
      SELECT u.*, (u.wake_at IS NOT NULL AND u.wake_at <= $5 AND u.wake_at < $3) AS due,
        ${notify('u.id', '(u.wake_at IS NOT NULL AND u.wake_at <= $5 AND u.wake_at < $3)', 'false')},
        ${PARENT_WOKEN(notify)} FROM u`,

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
          status_message = CASE WHEN cancel_requested THEN 'Task was cancelled.'
            ELSE COALESCE($3, status_message) END, updated_at = $4,
          runnable = false, lease_owner = NULL, lease_until = NULL, revision = revision + 1
        WHERE ${FENCED} RETURNING id, status, parent_id
      ), ${ASK_INPUTS(s)}, woke AS (${WAKE_PARENT(s, ENDED_CANCELLED, '$4::bigint')})
      SELECT ${notify('u.id', 'false', 'false')}, ${PARENT_WOKEN(notify)} FROM u`,
  };
}
