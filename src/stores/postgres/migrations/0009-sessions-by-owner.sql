-- The per-principal session cap counts an owner's live sessions.
CREATE INDEX sessions_owner ON :schema.sessions (tenant, principal, expires_at);
