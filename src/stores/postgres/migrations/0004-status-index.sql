-- Metrics count tasks per status with index-only scans instead of a scan of the whole table.
CREATE INDEX tasks_status ON :schema.tasks (status);
