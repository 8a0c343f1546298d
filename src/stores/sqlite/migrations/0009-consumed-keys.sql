-- One-time keys: the nonce of each MRTR requestState a round acted on, until the state expires (then swept).
CREATE TABLE consumed_keys (key TEXT PRIMARY KEY, expires_at INTEGER NOT NULL) STRICT, WITHOUT ROWID;
CREATE INDEX consumed_keys_expiry ON consumed_keys (expires_at);
