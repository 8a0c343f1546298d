-- error_outcome: the word a failed task's error gives as `data.outcome` (stores/error-outcome.ts: e.g. the
-- gateway's `unknown` for a call that may or may not have been done), written with the error by the same
-- statement and never sealed (a word from a short alphabet, as tool_error is a flag), so that operators find such
-- tasks when errors are sealed too. Filled here from the plain errors stored before (a sealed one stays NULL).
-- tasks_error_outcomes: the search of them, in creation order. A nullable column: no table rewrite.
ALTER TABLE :schema.tasks ADD COLUMN error_outcome text;
UPDATE :schema.tasks t SET error_outcome = o.word
FROM (
  SELECT id, CASE WHEN jsonb_typeof(e #> '{data,outcome}') = 'string' THEN e #>> '{data,outcome}' END AS word
  FROM (SELECT id, CASE WHEN left(error, 1) = '{' THEN error::jsonb END AS e FROM :schema.tasks
    WHERE status = 'failed') failed
) o
WHERE t.id = o.id AND o.word ~ '^[a-z][a-z0-9_]{0,31}$';
CREATE INDEX tasks_error_outcomes ON :schema.tasks (error_outcome, created_at, id)
  WHERE error_outcome IS NOT NULL;
