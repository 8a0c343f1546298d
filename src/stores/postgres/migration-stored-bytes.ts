// PostgreSQL migration 17: the bytes each owner's kept tasks store, counted by triggers (the byte quota).
// owner_bytes: the bytes each owner's kept tasks store, for the byte quota (stores/stored-bytes.ts): arguments,
// results, step values, input requests and answers, as stored (a sealed value counts sealed). Kept by triggers in
// the statement of every write that changes them, whatever wrote it (an older replica too). Each owner's count is
// spread over 16 rows (by task id), so that the writes of one principal's tasks do not all queue for one row lock;
// the quota sums them, and any shard may hold any of them (a shard may go below zero: it is the sum that counts).
// An insert of many tasks adds them to one shard of each owner (picked by the statement's first task id), so that
// two creation batches of one owner seldom share a row; purges count in a statement trigger that locks the rows in
// one order, so that two of them never deadlock; a write of one task (every statement that writes steps
// writes those of one task) counts in a row trigger and locks one owner row, last. A deleted task's bytes are
// summed before the cascade deletes its steps and inputs (purged_bytes holds them until the end of the
// statement), so a step write pays for one row only. TRUNCATE of tasks empties the counts. Filled once here from
// the tasks stored before, after the triggers are in place (their locks keep writers out until commit).

/** The count's tables, and the shard of a task's bytes. */
const tables = (s: string): string => `
      CREATE TABLE ${s}.owner_bytes (
        tenant text NOT NULL,
        principal text NOT NULL,
        shard smallint NOT NULL,
        bytes bigint NOT NULL,
        PRIMARY KEY (tenant, principal, shard)
      );
      CREATE TABLE ${s}.purged_bytes (task_id text PRIMARY KEY, bytes bigint NOT NULL);
      CREATE FUNCTION ${s}.owner_bytes_shard(task_id text) RETURNS smallint LANGUAGE sql IMMUTABLE
        AS $$ SELECT (hashtext(task_id) & 15)::smallint $$;`;

/** A task's own payload columns (arguments, result), as tasks are inserted and updated. */
const taskTriggers = (s: string): string => `
      CREATE FUNCTION ${s}.owner_bytes_tasks_added() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO ${s}.owner_bytes AS o (tenant, principal, shard, bytes)
        SELECT tenant, principal, ${s}.owner_bytes_shard(min(id)),
          sum(octet_length(args) + coalesce(octet_length(result), 0))
        FROM added GROUP BY 1, 2 ORDER BY 1, 2
        ON CONFLICT (tenant, principal, shard) DO UPDATE SET bytes = o.bytes + EXCLUDED.bytes;
        RETURN NULL;
      END $$;
      CREATE TRIGGER owner_bytes_tasks_added AFTER INSERT ON ${s}.tasks REFERENCING NEW TABLE AS added
        FOR EACH STATEMENT EXECUTE FUNCTION ${s}.owner_bytes_tasks_added();

      CREATE FUNCTION ${s}.owner_bytes_task_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE ${s}.owner_bytes SET bytes = bytes + octet_length(NEW.args) + coalesce(octet_length(NEW.result), 0)
          - octet_length(OLD.args) - coalesce(octet_length(OLD.result), 0)
        WHERE tenant = NEW.tenant AND principal = NEW.principal AND shard = ${s}.owner_bytes_shard(NEW.id);
        RETURN NULL;
      END $$;
      CREATE TRIGGER owner_bytes_task_changed AFTER UPDATE OF args, result ON ${s}.tasks FOR EACH ROW
        WHEN (OLD.args IS DISTINCT FROM NEW.args OR OLD.result IS DISTINCT FROM NEW.result)
        EXECUTE FUNCTION ${s}.owner_bytes_task_changed();`;

/** A deleted task's bytes, its steps and inputs included, freed from its owner; TRUNCATE empties the counts. */
const deleteTriggers = (s: string): string => `
      CREATE FUNCTION ${s}.owner_bytes_task_deleting() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO ${s}.purged_bytes AS p (task_id, bytes)
        VALUES (OLD.id, octet_length(OLD.args) + coalesce(octet_length(OLD.result), 0)
          + coalesce((SELECT sum(octet_length(value)) FROM ${s}.task_steps WHERE task_id = OLD.id), 0)
          + coalesce((SELECT sum(coalesce(octet_length(request), 0) + coalesce(octet_length(answer), 0))
            FROM ${s}.task_inputs WHERE task_id = OLD.id), 0))
        ON CONFLICT (task_id) DO UPDATE SET bytes = EXCLUDED.bytes;
        RETURN OLD;
      END $$;
      CREATE TRIGGER owner_bytes_task_deleting BEFORE DELETE ON ${s}.tasks FOR EACH ROW
        EXECUTE FUNCTION ${s}.owner_bytes_task_deleting();
      CREATE FUNCTION ${s}.owner_bytes_tasks_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE f record;
      BEGIN
        FOR f IN
          SELECT g.tenant, g.principal, ${s}.owner_bytes_shard(g.id) AS shard, sum(p.bytes) AS bytes
          FROM gone g JOIN ${s}.purged_bytes p ON p.task_id = g.id
          GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        LOOP
          UPDATE ${s}.owner_bytes SET bytes = bytes - f.bytes
          WHERE tenant = f.tenant AND principal = f.principal AND shard = f.shard;
          DELETE FROM ${s}.owner_bytes
          WHERE tenant = f.tenant AND principal = f.principal AND shard = f.shard AND bytes = 0;
        END LOOP;
        DELETE FROM ${s}.purged_bytes WHERE task_id IN (SELECT id FROM gone);
        RETURN NULL;
      END $$;
      CREATE TRIGGER owner_bytes_tasks_deleted AFTER DELETE ON ${s}.tasks REFERENCING OLD TABLE AS gone
        FOR EACH STATEMENT EXECUTE FUNCTION ${s}.owner_bytes_tasks_deleted();

      CREATE FUNCTION ${s}.owner_bytes_tasks_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        TRUNCATE ${s}.owner_bytes, ${s}.purged_bytes;
        RETURN NULL;
      END $$;
      CREATE TRIGGER owner_bytes_tasks_truncated AFTER TRUNCATE ON ${s}.tasks
        FOR EACH STATEMENT EXECUTE FUNCTION ${s}.owner_bytes_tasks_truncated();`;

/** The bytes of steps and inputs, as they are written. */
const partTriggers = (s: string): string => `
      CREATE FUNCTION ${s}.owner_bytes_step_added() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO ${s}.owner_bytes AS o (tenant, principal, shard, bytes)
        SELECT t.tenant, t.principal, ${s}.owner_bytes_shard(t.id), octet_length(NEW.value)
        FROM ${s}.tasks t WHERE t.id = NEW.task_id
        ON CONFLICT (tenant, principal, shard) DO UPDATE SET bytes = o.bytes + EXCLUDED.bytes;
        RETURN NULL;
      END $$;
      CREATE TRIGGER owner_bytes_step_added AFTER INSERT ON ${s}.task_steps FOR EACH ROW
        EXECUTE FUNCTION ${s}.owner_bytes_step_added();
      CREATE FUNCTION ${s}.owner_bytes_step_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE ${s}.owner_bytes o SET bytes = o.bytes + octet_length(NEW.value) - octet_length(OLD.value)
        FROM ${s}.tasks t
        WHERE t.id = NEW.task_id AND o.tenant = t.tenant AND o.principal = t.principal
          AND o.shard = ${s}.owner_bytes_shard(t.id);
        RETURN NULL;
      END $$;
      CREATE TRIGGER owner_bytes_step_changed AFTER UPDATE OF value ON ${s}.task_steps FOR EACH ROW
        WHEN (OLD.value IS DISTINCT FROM NEW.value) EXECUTE FUNCTION ${s}.owner_bytes_step_changed();
      CREATE FUNCTION ${s}.owner_bytes_inputs_added() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO ${s}.owner_bytes AS o (tenant, principal, shard, bytes)
        SELECT t.tenant, t.principal, ${s}.owner_bytes_shard(t.id),
          sum(coalesce(octet_length(a.request), 0) + coalesce(octet_length(a.answer), 0))
        FROM added a JOIN ${s}.tasks t ON t.id = a.task_id
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT (tenant, principal, shard) DO UPDATE SET bytes = o.bytes + EXCLUDED.bytes;
        RETURN NULL;
      END $$;
      CREATE TRIGGER owner_bytes_inputs_added AFTER INSERT ON ${s}.task_inputs REFERENCING NEW TABLE AS added
        FOR EACH STATEMENT EXECUTE FUNCTION ${s}.owner_bytes_inputs_added();
      CREATE FUNCTION ${s}.owner_bytes_input_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE ${s}.owner_bytes o SET bytes = o.bytes
          + coalesce(octet_length(NEW.request), 0) + coalesce(octet_length(NEW.answer), 0)
          - coalesce(octet_length(OLD.request), 0) - coalesce(octet_length(OLD.answer), 0)
        FROM ${s}.tasks t
        WHERE t.id = NEW.task_id AND o.tenant = t.tenant AND o.principal = t.principal
          AND o.shard = ${s}.owner_bytes_shard(t.id);
        RETURN NULL;
      END $$;
      CREATE TRIGGER owner_bytes_input_changed AFTER UPDATE OF request, answer ON ${s}.task_inputs FOR EACH ROW
        WHEN (OLD.request IS DISTINCT FROM NEW.request OR OLD.answer IS DISTINCT FROM NEW.answer)
        EXECUTE FUNCTION ${s}.owner_bytes_input_changed();`;

/** The count of the tasks stored before, once. */
const fill = (s: string): string => `
      INSERT INTO ${s}.owner_bytes (tenant, principal, shard, bytes)
      SELECT t.tenant, t.principal, ${s}.owner_bytes_shard(t.id),
        sum(octet_length(t.args) + coalesce(octet_length(t.result), 0)
          + coalesce((SELECT sum(octet_length(value)) FROM ${s}.task_steps WHERE task_id = t.id), 0)
          + coalesce((SELECT sum(coalesce(octet_length(request), 0) + coalesce(octet_length(answer), 0))
            FROM ${s}.task_inputs WHERE task_id = t.id), 0))
      FROM ${s}.tasks t GROUP BY 1, 2, 3;`;

export const storedBytesMigration = {
  version: 17,
  name: 'stored-bytes-per-owner',
  sql: (s: string): string =>
    [tables, taskTriggers, deleteTriggers, partTriggers, fill].map((f) => f(s)).join('\n'),
};
