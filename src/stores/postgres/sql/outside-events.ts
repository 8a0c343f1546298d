// SQL of the PostgreSQL task store. Events from outside a task (migration 29, outside_events): kept before the task
// waits, handed to its wait, taken into its history (../outside-events.ts).
import { FENCED, type Notify } from './fragments.js';

/** `s`: the quoted schema name. */
export function outsideEventSql(s: string, notify: Notify) {
  return {
    /** $1 id: the task a delivery names (whoever owns it). */
    eventTask: `SELECT tenant, principal, status, expires_at FROM ${s}.tasks WHERE id = $1`,
    /** $1 id, $2 token: the run still holds the task. */
    runHolds: `SELECT 1 AS held FROM ${s}.tasks WHERE ${FENCED}`,
    /** $1 id, $2 name: the task's row of the event, locked until the transaction ends. */
    eventRow: `SELECT state, payload, payload_hash, checked, schema, wait_until FROM ${s}.outside_events
      WHERE task_id = $1 AND name = $2 FOR UPDATE`,
    /** $1 id: how many events the task keeps that it does not wait for yet. */
    keptEvents: `SELECT count(*)::int AS n FROM ${s}.outside_events WHERE task_id = $1 AND state = 'kept'`,
    /** $1 id, $2 name, $3 payload, $4 hash, $5 bytes, $6 now: a row when kept (none: another came first). */
    keepEvent: `INSERT INTO ${s}.outside_events (task_id, name, state, payload, payload_hash, payload_bytes, received_at)
      VALUES ($1, $2, 'kept', $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING 1 AS kept`,
    /** $1 id, $2 name, $3 payload, $4 hash, $5 bytes, $6 checked, $7 now. */
    arriveEvent: `UPDATE ${s}.outside_events SET state = 'arrived', payload = $3, payload_hash = $4,
      payload_bytes = $5, checked = $6, received_at = $7 WHERE task_id = $1 AND name = $2`,
    /**
     * $1 id, $2 now: the task, waiting without a lease (its run ended waiting), is due now; the next claim gives it its
     * place in line. A row (and a notification) when it was.
     */
    wakeForEvent: `
      WITH w AS (
        UPDATE ${s}.tasks SET wake_at = $2, revision = revision + 1
        WHERE id = $1 AND status = 'working' AND lease_owner IS NULL AND wake_at IS NOT NULL AND wake_at > $2
        RETURNING id
      ) SELECT w.id, ${notify('w.id', 'true', 'false')} FROM w`,
    /** $1 id, $2 name, $3 schema, $4 now, $5 until: a row when registered (none: an event came first). */
    registerEventWait: `INSERT INTO ${s}.outside_events (task_id, name, state, schema, waited_at, wait_until)
      VALUES ($1, $2, 'waiting', $3, $4, $5) ON CONFLICT DO NOTHING RETURNING 1 AS registered`,
    /** $1 id, $2 name, $3 state. */
    setEventState: `UPDATE ${s}.outside_events SET state = $3 WHERE task_id = $1 AND name = $2`,
  };
}
