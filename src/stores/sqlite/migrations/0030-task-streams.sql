-- task_stream_chunks: the streams of partial results a run appends to (ctx.stream, TaskStreamsPort; ../streams.ts).
-- A chunk is at offset `seq` (0-based, in append order) of its stream, and named by `key` within the run's code: an
-- append of a key the stream holds writes nothing, so a replay after a crash does not repeat a chunk. `data`: the
-- chunk's text as JSON, sealed when the task's payloads are; `bytes`: the UTF-8 bytes of the text, for the task's
-- bound on what its streams keep. Deleted with the task. A new table: older processes keep working (they neither
-- write nor read it).
CREATE TABLE task_stream_chunks (
  task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  stream TEXT NOT NULL,
  seq INTEGER NOT NULL,
  key TEXT NOT NULL,
  data TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (task_id, stream, seq)
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX task_stream_chunks_key ON task_stream_chunks (task_id, stream, key);
