-- Child tasks (ctx.callTool, ../sql/children.ts). parent_id: the task whose run started this one (NULL: a caller's
-- own task); detached: 1 when cancelling the parent leaves this one running (the call said `detached`), NULL
-- otherwise. child_ended: 1 when a child of this task ended while the task ran or waited (set in the child's ending
-- write): a wait the task begins then ends at once, so a child ending during the run that looked at it is not missed.
-- tasks_parent finds a task's children (the cancel of a parent, the children shown with a task). An older process
-- neither wakes a parent when its child ends (the parent's wait ends at its bound instead) nor cancels children with
-- their parent. Nullable columns without a default and a partial index: older processes keep working.
ALTER TABLE tasks ADD COLUMN parent_id TEXT;
ALTER TABLE tasks ADD COLUMN detached INTEGER;
ALTER TABLE tasks ADD COLUMN child_ended INTEGER;
CREATE INDEX tasks_parent ON tasks (parent_id, created_at) WHERE parent_id IS NOT NULL;
