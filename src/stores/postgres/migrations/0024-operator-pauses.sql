-- PostgreSQL migration 24: operators' pauses of a tool or a concurrency key (sql/pauses.ts). task_pauses: one row per
-- pause in force; kind 'tool' or 'key', name the tool or the key as stored, tenant '' for every tenant. paused_at:
-- when a claim found the task held back by a pause and took it out of the line (NULL: not paused); while paused it
-- is not runnable, and resuming gives it a new place in line. An older replica neither reads the pauses nor pauses:
-- its claims run paused tools' tasks, and tasks paused already (not runnable) wait for a replica of this release to
-- resume them. A new table, a nullable column without a default and partial indexes: no table rewrite, older
-- replicas keep working.
CREATE TABLE :schema.task_pauses (
  kind text NOT NULL CHECK (kind IN ('tool', 'key')),
  name text NOT NULL,
  tenant text NOT NULL DEFAULT '',
  paused_at bigint NOT NULL,
  PRIMARY KEY (kind, name, tenant)
);
ALTER TABLE :schema.tasks ADD COLUMN paused_at bigint;
CREATE INDEX tasks_paused_tool ON :schema.tasks (tool, tenant, fair_at, placed_at, created_at)
  WHERE paused_at IS NOT NULL AND status = 'working';
CREATE INDEX tasks_paused_key ON :schema.tasks (concurrency_key, tenant, fair_at, placed_at, created_at)
  WHERE paused_at IS NOT NULL AND status = 'working';
