-- Rate limits per key (../rate-limits.ts). rate_key, rate_limit, rate_period_ms: the limit a task was created under
-- (NULL: none, as every task stored before). rate_reserved_at: the start a claim counted for the task's first run
-- (NULL: none yet); a task whose start was reserved for later waits like a sleep (wake_at, not runnable) and starts
-- then without another check, as it does after being parked for a concurrency slot. rate_limits: one row per key, its
-- theoretical arrival time (GCRA: when its next start is due, in ms, fractional), written under the key's advisory
-- lock; a row in the past means the same as none, and the sweep deletes it (rate_limits_tat). tasks_rate_waits: the
-- rate-limited tasks that have not started, by tool, for the count of those waiting for their start
-- (TaskStats.rateWaitsByTool). An older replica ignores the columns: its claims start rate-limited tasks freely, and a
-- task waiting for its reserved start is woken when due like any wait. Nullable columns without defaults (no table
-- rewrite), a new table and a partial index: older replicas keep working.
ALTER TABLE :schema.tasks ADD COLUMN rate_key text, ADD COLUMN rate_limit integer, ADD COLUMN rate_period_ms bigint,
  ADD COLUMN rate_reserved_at bigint;
CREATE INDEX tasks_rate_waits ON :schema.tasks (tool)
  WHERE rate_key IS NOT NULL AND attempt = 0 AND status = 'working';
CREATE TABLE :schema.rate_limits (
  key text PRIMARY KEY,
  tat double precision NOT NULL
);
CREATE INDEX rate_limits_tat ON :schema.rate_limits (tat);
