-- Server→client requests of legacy sessions: the answer may reach another replica than the one that asked.
CREATE TABLE :schema.session_requests (
  session_id text NOT NULL REFERENCES :schema.sessions (id) ON DELETE CASCADE,
  request_id text NOT NULL,
  origin text NOT NULL,
  answer jsonb,
  opened_at bigint NOT NULL,
  PRIMARY KEY (session_id, request_id)
);
CREATE INDEX session_requests_answered ON :schema.session_requests (origin) WHERE answer IS NOT NULL;
CREATE INDEX session_requests_opened ON :schema.session_requests (opened_at);
