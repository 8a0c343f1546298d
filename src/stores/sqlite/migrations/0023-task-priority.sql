-- priority: a task's priority among its owner's tasks (NewTask.priority; higher first). A claim that finds an owner's
-- task first in line (tasks_fair) takes that owner's waiting task of the highest priority instead and the first in line takes
-- its place (sql/claims.ts),
-- read through tasks_owner_priority: priorities reorder an owner's own tasks, never the turns between owners. A
-- constant default: no table rewrite, and rows an older process writes (without the column) have priority 0.
ALTER TABLE tasks ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
CREATE INDEX tasks_owner_priority ON tasks (tenant, principal, priority DESC, placed_at, fair_at, created_at)
  WHERE runnable = 1;
