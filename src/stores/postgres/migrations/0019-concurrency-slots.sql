-- PostgreSQL migration 19: concurrency limits per key (sql/slots.ts). concurrency_key, concurrency_limit: the limit a
-- task was created under (NULL: none, as every task stored before). parked_at: when a claim found its key full and
-- took it out of the line (NULL: not parked); while parked it is not runnable, and fair_at, placed_at are its place
-- in the key's own line (tasks_parked; tasks_parked_owner finds an owner's last place there). concurrency_slots: one
-- row per run holding a slot, naming the run by its token; a slot is held while that run's lease is, so a lapsed
-- lease frees it by itself. An older replica neither parks nor counts: its claims take limited tasks freely, and
-- parked tasks (not runnable) wait for a replica of this release. Nullable columns without defaults, a new table
-- and partial indexes: no table rewrite, older replicas keep working.
ALTER TABLE :schema.tasks ADD COLUMN concurrency_key text, ADD COLUMN concurrency_limit integer,
  ADD COLUMN parked_at bigint;
CREATE INDEX tasks_parked ON :schema.tasks (concurrency_key, fair_at, placed_at, created_at)
  WHERE parked_at IS NOT NULL AND status = 'working';
CREATE INDEX tasks_parked_owner ON :schema.tasks (concurrency_key, tenant, principal, fair_at)
  WHERE parked_at IS NOT NULL AND status = 'working';
CREATE TABLE :schema.concurrency_slots (
  task_id text PRIMARY KEY REFERENCES :schema.tasks (id) ON DELETE CASCADE,
  key text NOT NULL,
  token integer NOT NULL
);
CREATE INDEX concurrency_slots_key ON :schema.concurrency_slots (key);
