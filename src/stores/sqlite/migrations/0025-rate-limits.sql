-- Rate limits per key (../rate-limits.ts). rate_key, rate_limit, rate_period_ms: the limit a task was created under
-- (NULL: none, as every task stored before). rate_reserved_at: the start a claim counted for the task's first run
-- (NULL: none yet); a task whose start was reserved for later waits like a sleep (wake_at, not runnable) and starts
-- then without another check, as it does after being parked for a concurrency slot. rate_limits: one row per key, its
-- theoretical arrival time (GCRA: when its next start is due, in ms, fractional); a row in the past means the same as
-- none, and the sweep deletes it (rate_limits_tat). tasks_rate_waits: the rate-limited tasks that have not started, by
-- tool, for the count of those waiting for their start (TaskStats.rateWaitsByTool). An older process ignores the
-- columns: its claims start rate-limited tasks freely, and a task waiting for its reserved start is woken when due like
-- any wait. Nullable columns without defaults, a new table and a partial index: older processes keep working.
ALTER TABLE tasks ADD COLUMN rate_key TEXT;
ALTER TABLE tasks ADD COLUMN rate_limit INTEGER;
ALTER TABLE tasks ADD COLUMN rate_period_ms INTEGER;
ALTER TABLE tasks ADD COLUMN rate_reserved_at INTEGER;
CREATE INDEX tasks_rate_waits ON tasks (tool)
  WHERE rate_key IS NOT NULL AND attempt = 0 AND status = 'working';
CREATE TABLE rate_limits (
  key TEXT PRIMARY KEY,
  tat REAL NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX rate_limits_tat ON rate_limits (tat);
