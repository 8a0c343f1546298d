-- PostgreSQL migration 28: child tasks (ctx.callTool, sql/children.ts). parent_id: the task whose run started this
-- one (NULL: a caller's own task); detached: true when cancelling the parent leaves this one running (the call said
-- `detached`), NULL otherwise. child_ended: true when a child of this task ended while the task ran or waited (set in
-- the child's ending write, which locks the parent's row): a wait the task begins then ends at once, so a child
-- ending during the run that looked at it is not missed. tasks_parent finds a task's children (the cancel of a
-- parent, the children shown with a task). An older replica neither wakes a parent when its child ends (the parent's
-- wait ends at its bound instead) nor cancels children with their parent. Nullable columns without a default and a
-- partial index: no table rewrite, older replicas keep working.
ALTER TABLE :schema.tasks ADD COLUMN parent_id text, ADD COLUMN detached boolean, ADD COLUMN child_ended boolean;
CREATE INDEX tasks_parent ON :schema.tasks (parent_id, created_at) WHERE parent_id IS NOT NULL;
