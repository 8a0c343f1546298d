-- PostgreSQL migration 17: the bytes each owner's kept tasks store, counted by triggers (the byte quota).
-- owner_bytes: the bytes each owner's kept tasks store, for the byte quota (stores/stored-bytes.ts): arguments,
-- results, step values, input requests and answers, as stored (a sealed value counts sealed). Kept by triggers in
-- the statement of every write that changes them, whatever wrote it (an older replica too). Each owner's count is
-- spread over 16 rows (by task id), so that the writes of one principal's tasks do not all queue for one row lock;
-- the quota sums them, and any shard may hold any of them (a shard may go below zero: it is the sum that counts).
-- An insert of many tasks adds them to one shard of each owner (picked by the statement's first task id), so that
-- two creation batches of one owner seldom share a row; purges count in a statement trigger that locks the rows in
-- one order, so that two of them never deadlock; a write of one task (every statement that writes steps
-- writes those of one task) counts in a row trigger and locks one owner row, last. A deleted task's bytes are
-- summed before the cascade deletes its steps and inputs (purged_bytes holds them until the end of the
-- statement), so a step write pays for one row only. TRUNCATE of tasks empties the counts. Filled once here from
-- the tasks stored before, after the triggers are in place (their locks keep writers out until commit).

-- The count's tables, and the shard of a task's bytes.
CREATE TABLE :schema.owner_bytes (
  tenant text NOT NULL,
  principal text NOT NULL,
  shard smallint NOT NULL,
  bytes bigint NOT NULL,
  PRIMARY KEY (tenant, principal, shard)
);
CREATE TABLE :schema.purged_bytes (task_id text PRIMARY KEY, bytes bigint NOT NULL);
CREATE FUNCTION :schema.owner_bytes_shard(task_id text) RETURNS smallint LANGUAGE sql IMMUTABLE
  AS $$ SELECT (hashtext(task_id) & 15)::smallint $$;

-- A task's own payload columns (arguments, result), as tasks are inserted and updated.
CREATE FUNCTION :schema.owner_bytes_tasks_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO :schema.owner_bytes AS o (tenant, principal, shard, bytes)
  SELECT tenant, principal, :schema.owner_bytes_shard(min(id)),
    sum(octet_length(args) + coalesce(octet_length(result), 0))
  FROM added GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (tenant, principal, shard) DO UPDATE SET bytes = o.bytes + EXCLUDED.bytes;
  RETURN NULL;
END $$;
CREATE TRIGGER owner_bytes_tasks_added AFTER INSERT ON :schema.tasks REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION :schema.owner_bytes_tasks_added();

CREATE FUNCTION :schema.owner_bytes_task_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE :schema.owner_bytes SET bytes = bytes + octet_length(NEW.args) + coalesce(octet_length(NEW.result), 0)
    - octet_length(OLD.args) - coalesce(octet_length(OLD.result), 0)
  WHERE tenant = NEW.tenant AND principal = NEW.principal AND shard = :schema.owner_bytes_shard(NEW.id);
  RETURN NULL;
END $$;
CREATE TRIGGER owner_bytes_task_changed AFTER UPDATE OF args, result ON :schema.tasks FOR EACH ROW
  WHEN (OLD.args IS DISTINCT FROM NEW.args OR OLD.result IS DISTINCT FROM NEW.result)
  EXECUTE FUNCTION :schema.owner_bytes_task_changed();

-- A deleted task's bytes, its steps and inputs included, freed from its owner; TRUNCATE empties the counts.
CREATE FUNCTION :schema.owner_bytes_task_deleting() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO :schema.purged_bytes AS p (task_id, bytes)
  VALUES (OLD.id, octet_length(OLD.args) + coalesce(octet_length(OLD.result), 0)
    + coalesce((SELECT sum(octet_length(value)) FROM :schema.task_steps WHERE task_id = OLD.id), 0)
    + coalesce((SELECT sum(coalesce(octet_length(request), 0) + coalesce(octet_length(answer), 0))
      FROM :schema.task_inputs WHERE task_id = OLD.id), 0))
  ON CONFLICT (task_id) DO UPDATE SET bytes = EXCLUDED.bytes;
  RETURN OLD;
END $$;
CREATE TRIGGER owner_bytes_task_deleting BEFORE DELETE ON :schema.tasks FOR EACH ROW
  EXECUTE FUNCTION :schema.owner_bytes_task_deleting();
CREATE FUNCTION :schema.owner_bytes_tasks_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE f record;
BEGIN
  FOR f IN
    SELECT g.tenant, g.principal, :schema.owner_bytes_shard(g.id) AS shard, sum(p.bytes) AS bytes
    FROM gone g JOIN :schema.purged_bytes p ON p.task_id = g.id
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  LOOP
    UPDATE :schema.owner_bytes SET bytes = bytes - f.bytes
    WHERE tenant = f.tenant AND principal = f.principal AND shard = f.shard;
    DELETE FROM :schema.owner_bytes
    WHERE tenant = f.tenant AND principal = f.principal AND shard = f.shard AND bytes = 0;
  END LOOP;
  DELETE FROM :schema.purged_bytes WHERE task_id IN (SELECT id FROM gone);
  RETURN NULL;
END $$;
CREATE TRIGGER owner_bytes_tasks_deleted AFTER DELETE ON :schema.tasks REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION :schema.owner_bytes_tasks_deleted();

CREATE FUNCTION :schema.owner_bytes_tasks_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE :schema.owner_bytes, :schema.purged_bytes;
  RETURN NULL;
END $$;
CREATE TRIGGER owner_bytes_tasks_truncated AFTER TRUNCATE ON :schema.tasks
  FOR EACH STATEMENT EXECUTE FUNCTION :schema.owner_bytes_tasks_truncated();

-- The bytes of steps and inputs, as they are written.
CREATE FUNCTION :schema.owner_bytes_step_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO :schema.owner_bytes AS o (tenant, principal, shard, bytes)
  SELECT t.tenant, t.principal, :schema.owner_bytes_shard(t.id), octet_length(NEW.value)
  FROM :schema.tasks t WHERE t.id = NEW.task_id
  ON CONFLICT (tenant, principal, shard) DO UPDATE SET bytes = o.bytes + EXCLUDED.bytes;
  RETURN NULL;
END $$;
CREATE TRIGGER owner_bytes_step_added AFTER INSERT ON :schema.task_steps FOR EACH ROW
  EXECUTE FUNCTION :schema.owner_bytes_step_added();
CREATE FUNCTION :schema.owner_bytes_step_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE :schema.owner_bytes o SET bytes = o.bytes + octet_length(NEW.value) - octet_length(OLD.value)
  FROM :schema.tasks t
  WHERE t.id = NEW.task_id AND o.tenant = t.tenant AND o.principal = t.principal
    AND o.shard = :schema.owner_bytes_shard(t.id);
  RETURN NULL;
END $$;
CREATE TRIGGER owner_bytes_step_changed AFTER UPDATE OF value ON :schema.task_steps FOR EACH ROW
  WHEN (OLD.value IS DISTINCT FROM NEW.value) EXECUTE FUNCTION :schema.owner_bytes_step_changed();
CREATE FUNCTION :schema.owner_bytes_inputs_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO :schema.owner_bytes AS o (tenant, principal, shard, bytes)
  SELECT t.tenant, t.principal, :schema.owner_bytes_shard(t.id),
    sum(coalesce(octet_length(a.request), 0) + coalesce(octet_length(a.answer), 0))
  FROM added a JOIN :schema.tasks t ON t.id = a.task_id
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (tenant, principal, shard) DO UPDATE SET bytes = o.bytes + EXCLUDED.bytes;
  RETURN NULL;
END $$;
CREATE TRIGGER owner_bytes_inputs_added AFTER INSERT ON :schema.task_inputs REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION :schema.owner_bytes_inputs_added();
CREATE FUNCTION :schema.owner_bytes_input_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE :schema.owner_bytes o SET bytes = o.bytes
    + coalesce(octet_length(NEW.request), 0) + coalesce(octet_length(NEW.answer), 0)
    - coalesce(octet_length(OLD.request), 0) - coalesce(octet_length(OLD.answer), 0)
  FROM :schema.tasks t
  WHERE t.id = NEW.task_id AND o.tenant = t.tenant AND o.principal = t.principal
    AND o.shard = :schema.owner_bytes_shard(t.id);
  RETURN NULL;
END $$;
CREATE TRIGGER owner_bytes_input_changed AFTER UPDATE OF request, answer ON :schema.task_inputs FOR EACH ROW
  WHEN (OLD.request IS DISTINCT FROM NEW.request OR OLD.answer IS DISTINCT FROM NEW.answer)
  EXECUTE FUNCTION :schema.owner_bytes_input_changed();

-- The count of the tasks stored before, once.
INSERT INTO :schema.owner_bytes (tenant, principal, shard, bytes)
SELECT t.tenant, t.principal, :schema.owner_bytes_shard(t.id),
  sum(octet_length(t.args) + coalesce(octet_length(t.result), 0)
    + coalesce((SELECT sum(octet_length(value)) FROM :schema.task_steps WHERE task_id = t.id), 0)
    + coalesce((SELECT sum(coalesce(octet_length(request), 0) + coalesce(octet_length(answer), 0))
      FROM :schema.task_inputs WHERE task_id = t.id), 0))
FROM :schema.tasks t GROUP BY 1, 2, 3;
