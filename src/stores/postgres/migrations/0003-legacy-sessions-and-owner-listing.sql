CREATE TABLE :schema.sessions (
  id text PRIMARY KEY,
  tenant text NOT NULL,
  principal text NOT NULL,
  state jsonb NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL
);
CREATE INDEX sessions_expiry ON :schema.sessions (expires_at);
CREATE INDEX tasks_owner_created ON :schema.tasks (tenant, principal, created_at, id);
