-- started_at, saved_at: when a step's successful attempt started and when its result was saved (steps saved
-- before are NULL: unknown). created_message: the status message a task was created with, as status_message
-- keeps it ('' none; NULL: created before this migration, or by an older replica), which is the first entry of
-- its history; written by the insert, so a creation writes no other row. Nullable columns without defaults: no
-- table rewrite. task_history: each later change of status, with its time and the status message the task had
-- after it (as the row keeps it: sealed when the task's payloads are), written by a row trigger in the statement
-- that changed the status, whatever wrote it (an older replica too), and only when the status changed (renewals
-- and step writes pay nothing). A change to working that set no message records none (an answered task
-- resumes). The last 100 changes of a task are kept; the tasks row lock orders a task's entries.
ALTER TABLE :schema.task_steps ADD COLUMN started_at bigint, ADD COLUMN saved_at bigint;
ALTER TABLE :schema.tasks ADD COLUMN created_message text;
CREATE TABLE :schema.task_history (
  task_id text NOT NULL REFERENCES :schema.tasks (id) ON DELETE CASCADE,
  seq integer NOT NULL,
  at bigint NOT NULL,
  status text NOT NULL,
  message text,
  PRIMARY KEY (task_id, seq)
);
CREATE FUNCTION :schema.task_history_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE next integer;
BEGIN
  SELECT coalesce(max(seq), 0) + 1 INTO next FROM :schema.task_history WHERE task_id = NEW.id;
  INSERT INTO :schema.task_history (task_id, seq, at, status, message)
  VALUES (NEW.id, next, NEW.updated_at, NEW.status,
    CASE WHEN NEW.status = 'working' AND NEW.status_message IS NOT DISTINCT FROM OLD.status_message THEN NULL
      ELSE NEW.status_message END);
  DELETE FROM :schema.task_history WHERE task_id = NEW.id AND seq <= next - 100;
  RETURN NULL;
END $$;
CREATE TRIGGER task_history_changed AFTER UPDATE OF status ON :schema.tasks FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION :schema.task_history_changed();
