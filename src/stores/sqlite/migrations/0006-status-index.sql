-- Metrics count tasks per status from this index (a range of small entries) instead of scanning every row.
CREATE INDEX tasks_status ON tasks (status);
