-- tool_error: the task completed with a result that is a tool error (isError), written with the result by the
-- same statement (the result may be sealed; the flag never is). A task's outcome is its status, and tool_error
-- for a completed task that has it. Completed tasks stored before are marked from their result (plain JSON), or,
-- for a sealed result that SQL cannot read, from the error a thrown tool error keeps beside it (`failure`). A
-- sealed result that reported isError without throwing stays unmarked. tasks_tool_errors: the tool errors in
-- creation order (the search of them, and their count). retry_of: the task an operator's retry copied this one
-- from; tasks_retries finds the retries of a task.
ALTER TABLE tasks ADD COLUMN tool_error INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN retry_of TEXT;
UPDATE tasks SET tool_error = 1 WHERE status = 'completed' AND (failure IS NOT NULL
  OR CASE WHEN json_valid(result) THEN json_extract(result, '$.isError') = 1 ELSE 0 END);
CREATE INDEX tasks_tool_errors ON tasks (created_at, id) WHERE tool_error = 1;
CREATE INDEX tasks_retries ON tasks (retry_of, created_at, id) WHERE retry_of IS NOT NULL;
