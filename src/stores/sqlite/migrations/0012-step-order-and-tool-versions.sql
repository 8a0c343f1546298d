-- seq: the order in which a task's steps were done (steps done before are NULL: their order is unknown).
-- tool_version: the version of the tool's code that created the task (NULL: before versions, or none declared).
ALTER TABLE task_steps ADD COLUMN seq INTEGER;
ALTER TABLE tasks ADD COLUMN tool_version TEXT;
