-- wake_at: a working task without a lease that runs again at that time (a retry backoff, a sleep); it is not
-- runnable (not in tasks_runnable) until then. idempotency_key: unique per owner and tool while the task exists.
-- failure: the error a tool threw, kept for operators. task_step_attempts: failed attempts of steps.
-- tasks_live_expiry: the TTL sweep reads the unfinished tasks that expired only. The new columns are nullable
-- without a default: no table rewrite.
ALTER TABLE :schema.tasks ADD COLUMN wake_at bigint, ADD COLUMN idempotency_key text, ADD COLUMN failure text;
CREATE INDEX tasks_wake ON :schema.tasks (wake_at) WHERE wake_at IS NOT NULL;
CREATE INDEX tasks_live_expiry ON :schema.tasks (expires_at)
  WHERE expires_at IS NOT NULL AND status IN ('working','input_required');
CREATE UNIQUE INDEX tasks_idempotency ON :schema.tasks (idempotency_key, tenant, principal, tool)
  WHERE idempotency_key IS NOT NULL;
CREATE TABLE :schema.task_step_attempts (
  task_id text NOT NULL REFERENCES :schema.tasks (id) ON DELETE CASCADE,
  name text NOT NULL,
  failed integer NOT NULL,
  last_failure text NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (task_id, name)
);
