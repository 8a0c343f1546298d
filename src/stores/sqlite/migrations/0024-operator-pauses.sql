-- Operators' pauses of a tool or a concurrency key (../sql/pauses.ts). task_pauses: one row per pause in force; kind
-- 'tool' or 'key', name the tool or the key as stored, tenant '' for every tenant. paused_at: when a claim found the
-- task held back by a pause and took it out of the line (NULL: not paused); while paused it is not runnable, and
-- resuming gives it a new place in line. An older process neither reads the pauses nor pauses: its claims run paused
-- tools' tasks, and tasks paused already (not runnable) wait for a process of this release to resume them.
-- A new table, a nullable column without a default and partial indexes: older processes keep working.
CREATE TABLE task_pauses (
  kind TEXT NOT NULL CHECK (kind IN ('tool', 'key')),
  name TEXT NOT NULL,
  tenant TEXT NOT NULL DEFAULT '',
  paused_at INTEGER NOT NULL,
  PRIMARY KEY (kind, name, tenant)
) STRICT, WITHOUT ROWID;
ALTER TABLE tasks ADD COLUMN paused_at INTEGER;
CREATE INDEX tasks_paused_tool ON tasks (tool, tenant, fair_at, placed_at, created_at)
  WHERE paused_at IS NOT NULL AND status = 'working';
CREATE INDEX tasks_paused_key ON tasks (concurrency_key, tenant, fair_at, placed_at, created_at)
  WHERE paused_at IS NOT NULL AND status = 'working';
