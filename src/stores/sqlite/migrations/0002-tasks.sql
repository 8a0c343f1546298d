CREATE TABLE tasks (
  id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  principal TEXT NOT NULL,
  tool TEXT NOT NULL,
  args TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('working','input_required','completed','failed','cancelled')),
  status_message TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  ttl_ms INTEGER,
  poll_interval_ms INTEGER,
  expires_at INTEGER,
  result TEXT,
  error TEXT,
  replay_after_crash INTEGER NOT NULL,
  client_caps TEXT NOT NULL,
  runnable INTEGER NOT NULL DEFAULT 1,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  attempt INTEGER NOT NULL DEFAULT 0,
  lease_owner TEXT,
  lease_until INTEGER
) STRICT;
CREATE INDEX tasks_runnable ON tasks (created_at) WHERE runnable = 1;
CREATE INDEX tasks_expiry ON tasks (expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE task_steps (
  task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (task_id, name)
) STRICT, WITHOUT ROWID;
CREATE TABLE task_inputs (
  task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  request TEXT,
  answer TEXT,
  superseded INTEGER NOT NULL DEFAULT 0,
  asked_at INTEGER NOT NULL,
  answered_at INTEGER,
  PRIMARY KEY (task_id, key)
) STRICT, WITHOUT ROWID;
