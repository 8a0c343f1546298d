-- progress: the progress a task's handler showed last (JSON {progress, total?}, sealed with the task's payloads;
-- NULL: none yet), so that a replay, on any process, shows nothing behind it. version_wait: the attempt of a
-- runnable task at which a process that cannot run its version found it unclaimed for a while (NULL: never);
-- while the task is working at that attempt (no run claimed it since), its owner is told it waits for a server
-- running its version. Nullable columns without defaults: nothing is rewritten.
ALTER TABLE tasks ADD COLUMN progress TEXT;
ALTER TABLE tasks ADD COLUMN version_wait INTEGER;
