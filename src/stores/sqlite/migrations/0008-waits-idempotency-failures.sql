-- wake_at: a working task without a lease that runs again at that time (a retry backoff, a sleep); it is not
-- runnable (not in tasks_runnable) until then. idempotency_key: unique per owner and tool while the task exists.
-- failure: the error a tool threw, kept for operators. task_step_attempts: failed attempts of steps.
-- tasks_live_expiry: the TTL sweep reads the unfinished tasks that expired, not every working one.
ALTER TABLE tasks ADD COLUMN wake_at INTEGER;
ALTER TABLE tasks ADD COLUMN idempotency_key TEXT;
ALTER TABLE tasks ADD COLUMN failure TEXT;
CREATE INDEX tasks_wake ON tasks (wake_at) WHERE wake_at IS NOT NULL;
CREATE INDEX tasks_live_expiry ON tasks (expires_at)
  WHERE expires_at IS NOT NULL AND status IN ('working','input_required');
CREATE UNIQUE INDEX tasks_idempotency ON tasks (idempotency_key, tenant, principal, tool)
  WHERE idempotency_key IS NOT NULL;
CREATE TABLE task_step_attempts (
  task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  failed INTEGER NOT NULL,
  last_failure TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (task_id, name)
) STRICT, WITHOUT ROWID;
