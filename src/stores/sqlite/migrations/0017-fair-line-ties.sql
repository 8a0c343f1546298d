-- placed_at: when a task took its place in line (sql/conditions.ts, FAIR_PLACE), so that at one place the first
-- to take it is claimed first, not the oldest task (NULL: placed before this migration, or by an older process:
-- first among its place). tasks_fair orders the line by it (same name and rows, so the claims of an older process
-- on the file still read it). A nullable column without a default: no table rewrite.
ALTER TABLE tasks ADD COLUMN placed_at INTEGER;
DROP INDEX tasks_fair;
CREATE INDEX tasks_fair ON tasks (fair_at, placed_at, created_at) WHERE runnable = 1;
