CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  principal TEXT NOT NULL,
  state TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX sessions_expiry ON sessions (expires_at);
CREATE INDEX tasks_owner_created ON tasks (tenant, principal, created_at, id);
