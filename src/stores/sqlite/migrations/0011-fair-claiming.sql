-- fair_at: a task's place in line (sql/conditions.ts, FAIR_PLACE); unfinished tasks written before keep their
-- order by taking their creation time, and a task an older process creates without a place goes first. tasks_fair replaces tasks_runnable (same rows, claimed in line order);
-- tasks_owner_fair finds an owner's last place.
ALTER TABLE tasks ADD COLUMN fair_at REAL;
UPDATE tasks SET fair_at = created_at WHERE status IN ('working','input_required');
DROP INDEX tasks_runnable;
CREATE INDEX tasks_fair ON tasks (fair_at, created_at) WHERE runnable = 1;
CREATE INDEX tasks_owner_fair ON tasks (tenant, principal, fair_at) WHERE runnable = 1;
