CREATE TABLE task_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id TEXT NOT NULL,
  runnable INTEGER NOT NULL,
  cancel INTEGER NOT NULL,
  origin TEXT NOT NULL,
  at INTEGER NOT NULL
) STRICT;
CREATE INDEX task_events_at ON task_events (at);
