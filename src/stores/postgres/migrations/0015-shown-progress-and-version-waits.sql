-- progress: the progress a task's handler showed last (JSON {progress, total?}, sealed with the task's payloads;
-- NULL: none yet), so that a replay, on any replica, shows nothing behind it. version_wait: the attempt of a
-- runnable task at which a replica that cannot run its version found it unclaimed for a while (NULL: never);
-- while the task is working at that attempt (no run claimed it since), its owner is told it waits for a server
-- running its version. Nullable columns without defaults: no table rewrite.
ALTER TABLE :schema.tasks ADD COLUMN progress text, ADD COLUMN version_wait integer;
