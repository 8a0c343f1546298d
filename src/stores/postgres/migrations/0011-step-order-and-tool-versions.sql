-- seq: the order in which a task's steps were done (steps done before are NULL: their order is unknown).
-- tool_version: the version of the tool's code that created the task (NULL: before versions, or none declared).
-- Nullable columns without defaults: no table rewrite.
ALTER TABLE :schema.task_steps ADD COLUMN seq integer;
ALTER TABLE :schema.tasks ADD COLUMN tool_version text;
