-- debounce_key: the debounce key of a task created under task.debounce (NewTask.debounce; a keyed digest when it was
-- computed from the call and the task is sealed). While its task is pending (never started, working, its window
-- open: wake_at in the future and attempt 0) a creation with the same key, owner and tool joins it, replaces its
-- arguments or is refused; once it started, ended or its window closed, the next creation takes the key from it
-- (../core/debounce.ts). tasks_debounce keeps one holder per key, owner and tool across replicas. A nullable column
-- without a default: no table rewrite; older replicas never set it.
ALTER TABLE :schema.tasks ADD COLUMN debounce_key text;
CREATE UNIQUE INDEX tasks_debounce ON :schema.tasks (debounce_key, tenant, principal, tool)
  WHERE debounce_key IS NOT NULL;
