-- started_at, saved_at: when a step's successful attempt started and when its result was saved (steps saved
-- before are NULL: unknown). created_message: the status message a task was created with, as status_message
-- keeps it ('' none; NULL: created before this migration, or by an older process), which is the first entry of
-- its history; written by the insert, so a creation writes no other row. task_history: each later change of
-- status, with its time and the status message the task had after it (as the row keeps it: sealed when the
-- task's payloads are), written by a trigger in the transaction of the write that changed the status, whatever
-- wrote it (an older process too). A change to working that set no message records none (an answered task
-- resumes). The last 100 changes of a task are kept. Keyed first by the task's creation time, so that the
-- entries of tasks created together (which mostly change together) share pages: keyed by the random id alone,
-- every change dirtied a page of its own and a group commit of run endings wrote half as many per second. For
-- the same reason a trigger, not a foreign key (which wants an index by id), deletes them with their task.
ALTER TABLE task_steps ADD COLUMN started_at INTEGER;
ALTER TABLE task_steps ADD COLUMN saved_at INTEGER;
ALTER TABLE tasks ADD COLUMN created_message TEXT;
CREATE TABLE task_history (
  task_created INTEGER NOT NULL,
  task_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  at INTEGER NOT NULL,
  status TEXT NOT NULL,
  message TEXT,
  PRIMARY KEY (task_created, task_id, seq)
) STRICT, WITHOUT ROWID;
CREATE TRIGGER task_history_changed AFTER UPDATE OF status ON tasks WHEN NEW.status IS NOT OLD.status BEGIN
  INSERT INTO task_history (task_created, task_id, seq, at, status, message)
  SELECT NEW.created_at, NEW.id, coalesce(max(seq), 0) + 1, NEW.updated_at, NEW.status,
    CASE WHEN NEW.status = 'working' AND NEW.status_message IS OLD.status_message THEN NULL
      ELSE NEW.status_message END
  FROM task_history WHERE task_created = NEW.created_at AND task_id = NEW.id;
  DELETE FROM task_history WHERE task_created = NEW.created_at AND task_id = NEW.id
    AND seq <= (SELECT max(seq) FROM task_history WHERE task_created = NEW.created_at AND task_id = NEW.id) - 100;
END;
CREATE TRIGGER task_history_deleted AFTER DELETE ON tasks BEGIN
  DELETE FROM task_history WHERE task_created = OLD.created_at AND task_id = OLD.id;
END;
