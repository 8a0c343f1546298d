-- The per-principal session cap counts an owner's live sessions.
CREATE INDEX sessions_owner ON sessions (tenant, principal, expires_at);
