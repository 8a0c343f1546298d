-- tool_error: the task completed with a result that is a tool error (isError), written with the result by the
-- same statement (the result may be sealed; the flag never is). A task's outcome is its status, and tool_error
-- for a completed task that has it. A constant default and a nullable column: no table rewrite. Completed tasks
-- stored before are marked from their result (plain JSON), or, for a sealed result that SQL cannot read, from the
-- error a thrown tool error keeps beside it (`failure`); a sealed result that reported isError without throwing
-- stays unmarked. tasks_tool_errors: the tool errors in creation order (the search of them, and their count).
-- retry_of: the task an operator's retry copied this one from; tasks_retries finds the retries of a task.
ALTER TABLE :schema.tasks ADD COLUMN tool_error boolean NOT NULL DEFAULT false, ADD COLUMN retry_of text;
UPDATE :schema.tasks SET tool_error = true WHERE status = 'completed' AND (failure IS NOT NULL
  OR CASE WHEN left(result, 1) = '{' THEN (result::jsonb -> 'isError') = 'true'::jsonb ELSE false END);
CREATE INDEX tasks_tool_errors ON :schema.tasks (created_at, id) WHERE tool_error;
CREATE INDEX tasks_retries ON :schema.tasks (retry_of, created_at, id) WHERE retry_of IS NOT NULL;
