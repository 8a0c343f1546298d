// Prepared SQL of the SQLite task store. Events from outside a task (migration 29, outside_events): kept before the
// task waits, handed to its wait, taken into its history (../outside-events.ts).
import type { EventRow, EventState, EventTask } from '../../core/outside-events.js';
import type { SqliteDatabase } from '../database.js';

interface StoredEventRow extends Omit<EventRow, 'checked'> {
  checked: number;
}

export function prepareOutsideEventQueries(db: SqliteDatabase) {
  const task = db.prepare(`SELECT tenant, principal, status, expires_at FROM tasks WHERE id = ?`);
  const fenced = db
    .prepare(
      `SELECT 1 FROM tasks WHERE id = ? AND attempt = ? AND status = 'working' AND lease_owner IS NOT NULL`,
    )
    .pluck();
  const row = db.prepare(`SELECT state, payload, payload_hash, checked, schema, wait_until
    FROM outside_events WHERE task_id = ? AND name = ?`);
  const keptCount = db
    .prepare(`SELECT count(*) FROM outside_events WHERE task_id = ? AND state = 'kept'`)
    .pluck();
  const keep =
    db.prepare(`INSERT INTO outside_events (task_id, name, state, payload, payload_hash, payload_bytes,
      received_at) VALUES (@id, @name, 'kept', @payload, @hash, @bytes, @now)`);
  const arrive =
    db.prepare(`UPDATE outside_events SET state = 'arrived', payload = @payload, payload_hash = @hash,
      payload_bytes = @bytes, checked = @checked, received_at = @now WHERE task_id = @id AND name = @name`);
  // A task waiting without a lease (its run ended waiting) is due now: the next claim gives it its place in line.
  const wake = db.prepare(`UPDATE tasks SET wake_at = @now
    WHERE id = @id AND status = 'working' AND lease_owner IS NULL AND wake_at IS NOT NULL AND wake_at > @now`);
  const register =
    db.prepare(`INSERT INTO outside_events (task_id, name, state, schema, waited_at, wait_until)
      VALUES (@id, @name, 'waiting', @schema, @now, @until)`);
  const setState = db.prepare(`UPDATE outside_events SET state = ? WHERE task_id = ? AND name = ?`);
  // A lookup by id (the task's own row), not a read of waiting tasks: the wake-up is compared here.
  return {
    /** The task a delivery names (whoever owns it). */
    eventTask: (id: string) => task.get(id) as EventTask | undefined,
    /** The run `token` still holds task `id`. */
    runHolds: (id: string, token: number) => fenced.get(id, token) === 1,
    /** The task's row of event `name`, payload as stored (sealed or not). */
    eventRow: (id: string, name: string): EventRow | undefined => {
      const r = row.get(id, name) as StoredEventRow | undefined;
      return r === undefined ? undefined : { ...r, checked: r.checked === 1 };
    },
    /** How many events the task keeps that it does not wait for yet. */
    keptEvents: (id: string) => keptCount.get(id) as number,
    keepEvent: (p: { id: string; name: string; payload: string; hash: string; bytes: number; now: number }) =>
      keep.run(p),
    arriveEvent: (p: {
      id: string;
      name: string;
      payload: string;
      hash: string;
      bytes: number;
      checked: number;
      now: number;
    }) => arrive.run(p),
    /** Makes the task, waiting without a lease, due now; whether it was. */
    wakeForEvent: (id: string, now: number) => wake.run({ id, now }).changes === 1,
    registerEventWait: (p: { id: string; name: string; schema: string | null; until: number; now: number }) =>
      register.run(p),
    setEventState: (id: string, name: string, state: EventState) => setState.run(state, id, name),
  };
}
