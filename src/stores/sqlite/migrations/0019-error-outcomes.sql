-- error_outcome: the word a failed task's error gives as `data.outcome` (stores/error-outcome.ts: e.g. the
-- gateway's `unknown` for a call that may or may not have been done), written with the error by the same
-- statement and never sealed (a word from a short alphabet, as tool_error is a flag), so that operators find such
-- tasks when errors are sealed too. Filled here from the plain errors stored before (a sealed one stays NULL).
-- tasks_error_outcomes: the search of them, in creation order. A nullable column: nothing is rewritten.
ALTER TABLE tasks ADD COLUMN error_outcome TEXT;
UPDATE tasks SET error_outcome = json_extract(error, '$.data.outcome')
WHERE status = 'failed' AND json_valid(error) AND json_type(error, '$.data.outcome') = 'text'
  AND length(json_extract(error, '$.data.outcome')) BETWEEN 1 AND 32
  AND json_extract(error, '$.data.outcome') GLOB '[a-z]*'
  AND json_extract(error, '$.data.outcome') NOT GLOB '*[^a-z0-9_]*';
CREATE INDEX tasks_error_outcomes ON tasks (error_outcome, created_at, id) WHERE error_outcome IS NOT NULL;
