-- Server→client requests of legacy sessions: the answer may reach another process than the one that asked.
CREATE TABLE session_requests (
  session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  request_id TEXT NOT NULL,
  origin TEXT NOT NULL,
  answer TEXT,
  opened_at INTEGER NOT NULL,
  PRIMARY KEY (session_id, request_id)
) STRICT;
CREATE INDEX session_requests_answered ON session_requests (origin) WHERE answer IS NOT NULL;
CREATE INDEX session_requests_opened ON session_requests (opened_at);
