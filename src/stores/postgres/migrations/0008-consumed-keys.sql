-- One-time keys: the nonce of each MRTR requestState a round acted on, until the state expires (then swept).
CREATE TABLE :schema.consumed_keys (key text PRIMARY KEY, expires_at bigint NOT NULL);
CREATE INDEX consumed_keys_expiry ON :schema.consumed_keys (expires_at);
