// SQL of the PostgreSQL task store. Input a run asks for while it stays live (LiveInputPort): the task waits
// `input_required` under the run's lease, `runnable` cleared so that no claim takes it (a claim does not look at the
// status), and is `working` and runnable again when the wait ends, or when a sweep finds its lease lapsed.
import { ASK_INPUTS, FENCED, type Notify } from './fragments.js';

/** The run holding `token` still has its lease, working or waiting for live input. */
const HELD = `id = $1 AND attempt = $2 AND status IN ('working','input_required') AND lease_owner IS NOT NULL`;

/** `s`: the quoted schema name. */
export function liveInputSql(s: string, notify: Notify) {
  return {
    /** $3 status message, $4 now, $5 keys, $6 requests: asked in one statement, the lease kept. */
    liveAsk: `
      WITH u AS (
        UPDATE ${s}.tasks SET status = 'input_required', status_message = $3, updated_at = $4, runnable = false,
          revision = revision + 1
        WHERE ${FENCED} RETURNING id
      ), ${ASK_INPUTS(s)} SELECT ${notify('u.id', 'false', 'false')} FROM u`,

    /** $3 keys: the answers to them so far; no row when the run no longer holds the task. */
    liveAnswers: `
      SELECT (SELECT coalesce(json_agg(json_build_array(i.key, i.answer)), '[]'::json) FROM ${s}.task_inputs i
        WHERE i.task_id = t.id AND i.answer IS NOT NULL AND i.key = ANY ($3::text[])) AS answers
      FROM ${s}.tasks t WHERE ${HELD}`,

    /**
     * $3 status message, $4 now: back to working under the lease (if an answer did not do it already), the
     * requests still unanswered withdrawn. No row when the run no longer holds the task.
     */
    liveEnd: `
      WITH held AS (SELECT id, status FROM ${s}.tasks WHERE ${HELD} FOR UPDATE
      ), u AS (
        UPDATE ${s}.tasks t SET status = 'working', status_message = $3, updated_at = $4, runnable = true,
          revision = t.revision + 1
        FROM held WHERE t.id = held.id AND held.status = 'input_required' RETURNING t.id
      ), withdrawn AS (
        UPDATE ${s}.task_inputs i SET superseded = true FROM held
        WHERE i.task_id = held.id AND i.answer IS NULL AND NOT i.superseded
      ) SELECT held.id, (SELECT ${notify('u.id', 'false', 'false')} FROM u) AS notified FROM held`,

    /**
     * $1 now, $2 at most, $3 status message: tasks waiting for live input whose lease lapsed become runnable,
     * keeping their place; their unanswered requests are withdrawn.
     */
    liveRevive: `
      WITH lapsed AS (
        SELECT id FROM ${s}.tasks WHERE status = 'input_required' AND lease_owner IS NOT NULL AND lease_until < $1
        LIMIT $2 FOR UPDATE SKIP LOCKED
      ), u AS (
        UPDATE ${s}.tasks t SET status = 'working', status_message = $3, updated_at = $1, runnable = true,
          revision = t.revision + 1
        FROM lapsed WHERE t.id = lapsed.id RETURNING t.id
      ), withdrawn AS (
        UPDATE ${s}.task_inputs i SET superseded = true FROM u
        WHERE i.task_id = u.id AND i.answer IS NULL AND NOT i.superseded
      ) SELECT u.id, ${notify('u.id', 'true', 'false')} FROM u`,
  };
}
