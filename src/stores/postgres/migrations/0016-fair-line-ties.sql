-- placed_at: when a task took its place in line (sql/fragments.ts, fairPlace), so that at one place the first to
-- take it is claimed first, not the oldest task (NULL: placed before this migration, or by an older replica:
-- first among its place). tasks_fair orders the line by it (the same rows: runnable tasks only). A nullable
-- column without a default: no table rewrite.
ALTER TABLE :schema.tasks ADD COLUMN placed_at bigint;
DROP INDEX :schema.tasks_fair;
CREATE INDEX tasks_fair ON :schema.tasks (fair_at NULLS FIRST, placed_at NULLS FIRST, created_at) WHERE runnable;
