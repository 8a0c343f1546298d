-- PostgreSQL migration 21: every change to the byte count reaches it, whichever shard it falls in, and the count is
-- taken again once.
-- Migration 17 adds an insert of several tasks to one shard of each owner (that of the statement's first task),
-- while a later write of one task (its result, a step or an input written again, its deletion) counts in the task's
-- own shard. Those writes updated that shard's row only where it existed, so a change to a task whose shard held no
-- row yet was lost: a count too high after a purge, too low after a result. Now each one adds to its shard's row,
-- creating it (a shard may go below zero: it is the sum that counts). The count is then filled again from what the
-- tasks store, with writes to the counted tables held until this commits (as migration 17 does). Older replicas run
-- the same trigger functions: nothing for them to change.

CREATE OR REPLACE FUNCTION :schema.owner_bytes_task_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO :schema.owner_bytes AS o (tenant, principal, shard, bytes)
  VALUES (NEW.tenant, NEW.principal, :schema.owner_bytes_shard(NEW.id),
    octet_length(NEW.args) + coalesce(octet_length(NEW.result), 0)
      - octet_length(OLD.args) - coalesce(octet_length(OLD.result), 0))
  ON CONFLICT (tenant, principal, shard) DO UPDATE SET bytes = o.bytes + EXCLUDED.bytes;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION :schema.owner_bytes_tasks_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE f record;
BEGIN
  FOR f IN
    SELECT g.tenant, g.principal, :schema.owner_bytes_shard(g.id) AS shard, sum(p.bytes) AS bytes
    FROM gone g JOIN :schema.purged_bytes p ON p.task_id = g.id
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  LOOP
    INSERT INTO :schema.owner_bytes AS o (tenant, principal, shard, bytes)
    VALUES (f.tenant, f.principal, f.shard, -f.bytes)
    ON CONFLICT (tenant, principal, shard) DO UPDATE SET bytes = o.bytes + EXCLUDED.bytes;
    DELETE FROM :schema.owner_bytes
    WHERE tenant = f.tenant AND principal = f.principal AND shard = f.shard AND bytes = 0;
  END LOOP;
  DELETE FROM :schema.purged_bytes WHERE task_id IN (SELECT id FROM gone);
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION :schema.owner_bytes_step_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO :schema.owner_bytes AS o (tenant, principal, shard, bytes)
  SELECT t.tenant, t.principal, :schema.owner_bytes_shard(t.id), octet_length(NEW.value) - octet_length(OLD.value)
  FROM :schema.tasks t WHERE t.id = NEW.task_id
  ON CONFLICT (tenant, principal, shard) DO UPDATE SET bytes = o.bytes + EXCLUDED.bytes;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION :schema.owner_bytes_input_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO :schema.owner_bytes AS o (tenant, principal, shard, bytes)
  SELECT t.tenant, t.principal, :schema.owner_bytes_shard(t.id),
    coalesce(octet_length(NEW.request), 0) + coalesce(octet_length(NEW.answer), 0)
      - coalesce(octet_length(OLD.request), 0) - coalesce(octet_length(OLD.answer), 0)
  FROM :schema.tasks t WHERE t.id = NEW.task_id
  ON CONFLICT (tenant, principal, shard) DO UPDATE SET bytes = o.bytes + EXCLUDED.bytes;
  RETURN NULL;
END $$;

-- The count taken again: writers of the counted tables wait until this commits.
LOCK TABLE :schema.tasks, :schema.task_steps, :schema.task_inputs, :schema.owner_bytes IN SHARE ROW EXCLUSIVE MODE;
DELETE FROM :schema.owner_bytes;
INSERT INTO :schema.owner_bytes (tenant, principal, shard, bytes)
SELECT t.tenant, t.principal, :schema.owner_bytes_shard(t.id),
  sum(octet_length(t.args) + coalesce(octet_length(t.result), 0)
    + coalesce((SELECT sum(octet_length(value)) FROM :schema.task_steps WHERE task_id = t.id), 0)
    + coalesce((SELECT sum(coalesce(octet_length(request), 0) + coalesce(octet_length(answer), 0))
      FROM :schema.task_inputs WHERE task_id = t.id), 0))
FROM :schema.tasks t GROUP BY 1, 2, 3;
