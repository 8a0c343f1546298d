-- Slots of concurrency keys taken by holders other than a task's claim (../sql/slots.ts, TaskStore.acquireSlot): a
-- step of a run (ctx.step's concurrency), or a call that runs within its request. slot_holders: one row per holding,
-- named by `holder`; a step's row names its run (task_id, token) and counts while that run holds its lease, a call's
-- row counts until `until` (renewed while the call runs), so a process that dies frees it by itself. A key's count
-- is its slots held by runs plus its live holder rows. An older process neither writes nor counts these rows: during
-- a rolling upgrade it may start a task of a key whose slots steps or calls hold. A new table: older processes keep
-- working.
CREATE TABLE slot_holders (
  holder TEXT PRIMARY KEY,
  key TEXT NOT NULL,
  task_id TEXT,
  token INTEGER,
  until INTEGER
) STRICT, WITHOUT ROWID;
CREATE INDEX slot_holders_key ON slot_holders (key);
