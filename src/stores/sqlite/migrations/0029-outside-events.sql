-- Events from outside a task (../events.ts, ExecutionContext.waitForEvent): one row per task and event name.
-- state: 'kept' (delivered before the task waited for it), 'waiting' (the task waits, nothing came yet), 'arrived'
-- (delivered while the task waited; it is woken), 'read' (its run took the payload into its history), 'timed_out'
-- (the wait ended without it; later deliveries are refused). payload: the JSON delivered, sealed as the task's
-- payloads; payload_hash: its SHA-256, so that a repeated delivery is recognised (the same: no effect; another:
-- refused). checked: the payload was checked against the wait's schema when it came. wait_until: when the wait times
-- out (the first run's, kept for every replay). Deleted with their task. An older process neither reads nor writes
-- these rows: a task waiting for an event that such a process runs fails as an unknown wait. A new table: older
-- processes keep working.
CREATE TABLE outside_events (
  task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('kept', 'waiting', 'arrived', 'read', 'timed_out')),
  payload TEXT,
  payload_hash TEXT,
  payload_bytes INTEGER NOT NULL DEFAULT 0,
  checked INTEGER NOT NULL DEFAULT 0,
  schema TEXT,
  received_at INTEGER,
  waited_at INTEGER,
  wait_until INTEGER,
  PRIMARY KEY (task_id, name)
) STRICT, WITHOUT ROWID;
