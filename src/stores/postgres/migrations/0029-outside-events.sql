-- PostgreSQL migration 29: events from outside a task (../events.ts, ExecutionContext.waitForEvent): one row per task
-- and event name. state: 'kept' (delivered before the task waited for it), 'waiting' (the task waits, nothing came
-- yet), 'arrived' (delivered while the task waited; it is woken), 'read' (its run took the payload into its history),
-- 'timed_out' (the wait ended without it; later deliveries are refused). payload: the JSON delivered, sealed as the
-- task's payloads; payload_hash: its SHA-256, so that a repeated delivery is recognised (the same: no effect;
-- another: refused). checked: the payload was checked against the wait's schema when it came. wait_until: when the
-- wait times out (the first run's, kept for every replay). Deleted with their task. An older replica neither reads
-- nor writes these rows. A new table: no rewrite, older replicas keep working.
CREATE TABLE :schema.outside_events (
  task_id text NOT NULL REFERENCES :schema.tasks (id) ON DELETE CASCADE,
  name text NOT NULL,
  state text NOT NULL CHECK (state IN ('kept', 'waiting', 'arrived', 'read', 'timed_out')),
  payload text,
  payload_hash text,
  payload_bytes integer NOT NULL DEFAULT 0,
  checked boolean NOT NULL DEFAULT false,
  schema text,
  received_at bigint,
  waited_at bigint,
  wait_until bigint,
  PRIMARY KEY (task_id, name)
);
