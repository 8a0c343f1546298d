-- Times are epoch milliseconds (bigint) passed in by the caller, never the database clock, so injected time works.
-- Payload columns are text: they hold JSON, or a cipher's sealed string.
CREATE TABLE :schema.tasks (
  id text PRIMARY KEY,
  tenant text NOT NULL,
  principal text NOT NULL,
  tool text NOT NULL,
  args text NOT NULL,
  status text NOT NULL CHECK (status IN ('working','input_required','completed','failed','cancelled')),
  status_message text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  ttl_ms bigint,
  poll_interval_ms bigint,
  expires_at bigint,
  result text,
  error text,
  replay_after_crash boolean NOT NULL,
  client_caps jsonb NOT NULL,
  runnable boolean NOT NULL DEFAULT true,
  cancel_requested boolean NOT NULL DEFAULT false,
  attempt integer NOT NULL DEFAULT 0,
  lease_owner text,
  lease_until bigint,
  sealed boolean NOT NULL DEFAULT false
);
CREATE INDEX tasks_runnable ON :schema.tasks (created_at) WHERE runnable;
CREATE INDEX tasks_expiry ON :schema.tasks (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX tasks_owner_active ON :schema.tasks (tenant, principal)
  WHERE status IN ('working','input_required');
CREATE TABLE :schema.task_steps (
  task_id text NOT NULL REFERENCES :schema.tasks (id) ON DELETE CASCADE,
  name text NOT NULL,
  value text NOT NULL,
  PRIMARY KEY (task_id, name)
);
CREATE TABLE :schema.task_inputs (
  task_id text NOT NULL REFERENCES :schema.tasks (id) ON DELETE CASCADE,
  key text NOT NULL,
  request text,
  answer text,
  superseded boolean NOT NULL DEFAULT false,
  asked_at bigint NOT NULL,
  answered_at bigint,
  PRIMARY KEY (task_id, key)
);
