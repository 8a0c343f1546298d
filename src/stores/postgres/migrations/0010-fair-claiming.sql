-- fair_at: a task's place in line (sql/creation.ts); unfinished tasks written before keep their order by taking
-- their creation time (a nullable column without a default: no table rewrite), and a task an older replica
-- creates without a place goes first (NULLS FIRST). tasks_fair replaces tasks_runnable (same rows, claimed in
-- line order); tasks_owner_fair finds an owner's last place.
ALTER TABLE :schema.tasks ADD COLUMN fair_at double precision;
UPDATE :schema.tasks SET fair_at = created_at WHERE status IN ('working','input_required');
DROP INDEX :schema.tasks_runnable;
CREATE INDEX tasks_fair ON :schema.tasks (fair_at NULLS FIRST, created_at) WHERE runnable;
CREATE INDEX tasks_owner_fair ON :schema.tasks (tenant, principal, fair_at) WHERE runnable;
