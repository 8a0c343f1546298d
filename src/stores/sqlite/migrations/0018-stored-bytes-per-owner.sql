-- owner_bytes: the bytes each owner's kept tasks store, for the byte quota (stores/stored-bytes.ts): arguments,
-- results, step values, input requests and answers, as stored (a sealed value counts sealed). Kept by triggers in
-- the transaction of every write that changes them, whatever wrote it (an older process too); a deleted task
-- takes its bytes with it (its steps and inputs summed before the cascade deletes them), and an owner left with
-- none loses its row. A step written again under its name is an update, not a REPLACE (whose delete fires no
-- trigger). Filled once here from the tasks stored before.
CREATE TABLE owner_bytes (
  tenant TEXT NOT NULL,
  principal TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  PRIMARY KEY (tenant, principal)
) STRICT, WITHOUT ROWID;
CREATE TRIGGER owner_bytes_task_added AFTER INSERT ON tasks BEGIN
  INSERT INTO owner_bytes (tenant, principal, bytes)
  VALUES (NEW.tenant, NEW.principal, octet_length(NEW.args) + coalesce(octet_length(NEW.result), 0))
  ON CONFLICT (tenant, principal) DO UPDATE SET bytes = bytes + excluded.bytes;
END;
CREATE TRIGGER owner_bytes_task_changed AFTER UPDATE OF args, result ON tasks
WHEN NEW.args IS NOT OLD.args OR NEW.result IS NOT OLD.result BEGIN
  UPDATE owner_bytes SET bytes = bytes + octet_length(NEW.args) + coalesce(octet_length(NEW.result), 0)
    - octet_length(OLD.args) - coalesce(octet_length(OLD.result), 0)
  WHERE tenant = NEW.tenant AND principal = NEW.principal;
END;
CREATE TRIGGER owner_bytes_task_deleted BEFORE DELETE ON tasks BEGIN
  UPDATE owner_bytes SET bytes = bytes - octet_length(OLD.args) - coalesce(octet_length(OLD.result), 0)
    - coalesce((SELECT sum(octet_length(value)) FROM task_steps WHERE task_id = OLD.id), 0)
    - coalesce((SELECT sum(coalesce(octet_length(request), 0) + coalesce(octet_length(answer), 0))
      FROM task_inputs WHERE task_id = OLD.id), 0)
  WHERE tenant = OLD.tenant AND principal = OLD.principal;
  DELETE FROM owner_bytes WHERE tenant = OLD.tenant AND principal = OLD.principal AND bytes <= 0;
END;
CREATE TRIGGER owner_bytes_step_added AFTER INSERT ON task_steps BEGIN
  INSERT INTO owner_bytes (tenant, principal, bytes)
  SELECT tenant, principal, octet_length(NEW.value) FROM tasks WHERE id = NEW.task_id
  ON CONFLICT (tenant, principal) DO UPDATE SET bytes = bytes + excluded.bytes;
END;
CREATE TRIGGER owner_bytes_step_changed AFTER UPDATE OF value ON task_steps BEGIN
  UPDATE owner_bytes SET bytes = bytes + octet_length(NEW.value) - octet_length(OLD.value)
  WHERE (tenant, principal) = (SELECT tenant, principal FROM tasks WHERE id = NEW.task_id);
END;
CREATE TRIGGER owner_bytes_input_added AFTER INSERT ON task_inputs BEGIN
  INSERT INTO owner_bytes (tenant, principal, bytes)
  SELECT tenant, principal, coalesce(octet_length(NEW.request), 0) + coalesce(octet_length(NEW.answer), 0)
  FROM tasks WHERE id = NEW.task_id
  ON CONFLICT (tenant, principal) DO UPDATE SET bytes = bytes + excluded.bytes;
END;
CREATE TRIGGER owner_bytes_input_changed AFTER UPDATE OF request, answer ON task_inputs BEGIN
  UPDATE owner_bytes SET bytes = bytes
    + coalesce(octet_length(NEW.request), 0) + coalesce(octet_length(NEW.answer), 0)
    - coalesce(octet_length(OLD.request), 0) - coalesce(octet_length(OLD.answer), 0)
  WHERE (tenant, principal) = (SELECT tenant, principal FROM tasks WHERE id = NEW.task_id);
END;
INSERT INTO owner_bytes (tenant, principal, bytes)
SELECT t.tenant, t.principal, sum(octet_length(t.args) + coalesce(octet_length(t.result), 0)
  + coalesce((SELECT sum(octet_length(value)) FROM task_steps WHERE task_id = t.id), 0)
  + coalesce((SELECT sum(coalesce(octet_length(request), 0) + coalesce(octet_length(answer), 0))
    FROM task_inputs WHERE task_id = t.id), 0))
FROM tasks t GROUP BY t.tenant, t.principal;
