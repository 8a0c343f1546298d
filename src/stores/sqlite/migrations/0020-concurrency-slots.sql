-- Concurrency limits per key (../sql/slots.ts). concurrency_key, concurrency_limit: the limit a task was created
-- under (NULL: none, as every task stored before). parked_at: when a claim found its key full and took it out of
-- the line (NULL: not parked); while parked it is not runnable, and fair_at, placed_at are its place in the key's
-- own line. concurrency_slots: one row per run holding a slot, naming the run by its token; a slot is held while
-- that run's lease is (so a lapsed lease frees it by itself). An older process neither parks nor counts: its
-- claims take limited tasks freely, and parked tasks (not runnable) wait for a process of this release.
-- Nullable columns without defaults, a new table and partial indexes: older processes keep working.
ALTER TABLE tasks ADD COLUMN concurrency_key TEXT;
ALTER TABLE tasks ADD COLUMN concurrency_limit INTEGER;
ALTER TABLE tasks ADD COLUMN parked_at INTEGER;
CREATE INDEX tasks_parked ON tasks (concurrency_key, fair_at, placed_at, created_at)
  WHERE parked_at IS NOT NULL AND status = 'working';
CREATE INDEX tasks_parked_owner ON tasks (concurrency_key, tenant, principal, fair_at)
  WHERE parked_at IS NOT NULL AND status = 'working';
CREATE TABLE concurrency_slots (
  task_id TEXT PRIMARY KEY,
  key TEXT NOT NULL,
  token INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX concurrency_slots_key ON concurrency_slots (key);
CREATE TRIGGER concurrency_slots_task_deleted AFTER DELETE ON tasks BEGIN
  DELETE FROM concurrency_slots WHERE task_id = OLD.id;
END;
