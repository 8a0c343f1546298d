-- priority: a task's priority among its owner's tasks (NewTask.priority; higher first). A claim that finds an owner's
-- tasks first in line (tasks_fair) takes that owner's waiting tasks of the highest priority instead and the first in line take
-- their places (sql/runs.ts),
-- read through tasks_owner_priority: priorities reorder an owner's own tasks, never the turns between owners. A
-- constant default: no table rewrite, and rows an older replica writes (without the column) have priority 0.
ALTER TABLE :schema.tasks ADD COLUMN priority integer NOT NULL DEFAULT 0;
CREATE INDEX tasks_owner_priority ON :schema.tasks
  (tenant, principal, priority DESC, placed_at NULLS FIRST, fair_at NULLS FIRST, created_at) WHERE runnable;
