// Numbered schema migrations for the SQLite store, applied in order inside one transaction each.
// A new migration keeps older releases working on the schema (nullable columns, new tables and indexes), or else
// records its version under `serve_min_migration` in server_meta in its own SQL, so older releases refuse to serve
// the store (a rollback) rather than misread it: see ../../schema-fit.ts.
import { concurrencySlotsMigration } from './concurrency-slots.js';
import type { Migration } from './migration.js';

export type { Migration } from './migration.js';

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'server-meta',
    sql: `CREATE TABLE server_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;`,
  },
  {
    version: 2,
    name: 'tasks',
    sql: `
      CREATE TABLE tasks (
        id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL,
        principal TEXT NOT NULL,
        tool TEXT NOT NULL,
        args TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('working','input_required','completed','failed','cancelled')),
        status_message TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        ttl_ms INTEGER,
        poll_interval_ms INTEGER,
        expires_at INTEGER,
        result TEXT,
        error TEXT,
        replay_after_crash INTEGER NOT NULL,
        client_caps TEXT NOT NULL,
        runnable INTEGER NOT NULL DEFAULT 1,
        cancel_requested INTEGER NOT NULL DEFAULT 0,
        attempt INTEGER NOT NULL DEFAULT 0,
        lease_owner TEXT,
        lease_until INTEGER
      ) STRICT;
      CREATE INDEX tasks_runnable ON tasks (created_at) WHERE runnable = 1;
      CREATE INDEX tasks_expiry ON tasks (expires_at) WHERE expires_at IS NOT NULL;
      CREATE TABLE task_steps (
        task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (task_id, name)
      ) STRICT, WITHOUT ROWID;
      CREATE TABLE task_inputs (
        task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        request TEXT,
        answer TEXT,
        superseded INTEGER NOT NULL DEFAULT 0,
        asked_at INTEGER NOT NULL,
        answered_at INTEGER,
        PRIMARY KEY (task_id, key)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 3,
    name: 'sealed-payloads-and-owner-index',
    sql: `
      ALTER TABLE tasks ADD COLUMN sealed INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX tasks_owner_active ON tasks (tenant, principal) WHERE status IN ('working','input_required');
    `,
  },
  {
    version: 4,
    name: 'task-events',
    sql: `
      CREATE TABLE task_events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        task_id TEXT NOT NULL,
        runnable INTEGER NOT NULL,
        cancel INTEGER NOT NULL,
        origin TEXT NOT NULL,
        at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX task_events_at ON task_events (at);
    `,
  },
  {
    version: 5,
    name: 'legacy-sessions-and-owner-listing',
    sql: `
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL,
        principal TEXT NOT NULL,
        state TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX sessions_expiry ON sessions (expires_at);
      CREATE INDEX tasks_owner_created ON tasks (tenant, principal, created_at, id);
    `,
  },
  {
    version: 6,
    name: 'status-index',
    // Metrics count tasks per status from this index (a range of small entries) instead of scanning every row.
    sql: `CREATE INDEX tasks_status ON tasks (status);`,
  },
  {
    version: 7,
    name: 'session-requests',
    // Server→client requests of legacy sessions: the answer may reach another process than the one that asked.
    sql: `
      CREATE TABLE session_requests (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        request_id TEXT NOT NULL,
        origin TEXT NOT NULL,
        answer TEXT,
        opened_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, request_id)
      ) STRICT;
      CREATE INDEX session_requests_answered ON session_requests (origin) WHERE answer IS NOT NULL;
      CREATE INDEX session_requests_opened ON session_requests (opened_at);
    `,
  },
  {
    version: 8,
    name: 'waits-idempotency-failures',
    // wake_at: a working task without a lease that runs again at that time (a retry backoff, a sleep); it is not
    // runnable (not in tasks_runnable) until then. idempotency_key: unique per owner and tool while the task exists.
    // failure: the error a tool threw, kept for operators. task_step_attempts: failed attempts of steps.
    // tasks_live_expiry: the TTL sweep reads the unfinished tasks that expired, not every working one.
    sql: `
      ALTER TABLE tasks ADD COLUMN wake_at INTEGER;
      ALTER TABLE tasks ADD COLUMN idempotency_key TEXT;
      ALTER TABLE tasks ADD COLUMN failure TEXT;
      CREATE INDEX tasks_wake ON tasks (wake_at) WHERE wake_at IS NOT NULL;
      CREATE INDEX tasks_live_expiry ON tasks (expires_at)
        WHERE expires_at IS NOT NULL AND status IN ('working','input_required');
      CREATE UNIQUE INDEX tasks_idempotency ON tasks (idempotency_key, tenant, principal, tool)
        WHERE idempotency_key IS NOT NULL;
      CREATE TABLE task_step_attempts (
        task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        failed INTEGER NOT NULL,
        last_failure TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (task_id, name)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 9,
    name: 'consumed-keys',
    // One-time keys: the nonce of each MRTR requestState a round acted on, until the state expires (then swept).
    sql: `
      CREATE TABLE consumed_keys (key TEXT PRIMARY KEY, expires_at INTEGER NOT NULL) STRICT, WITHOUT ROWID;
      CREATE INDEX consumed_keys_expiry ON consumed_keys (expires_at);
    `,
  },
  {
    version: 10,
    name: 'sessions-by-owner',
    // The per-principal session cap counts an owner's live sessions.
    sql: `CREATE INDEX sessions_owner ON sessions (tenant, principal, expires_at);`,
  },
  {
    version: 11,
    name: 'fair-claiming',
    // fair_at: a task's place in line (sql/conditions.ts, FAIR_PLACE); unfinished tasks written before keep their
    // order by taking their creation time, and a task an older process creates without a place goes first. tasks_fair replaces tasks_runnable (same rows, claimed in line order);
    // tasks_owner_fair finds an owner's last place.
    sql: `
      ALTER TABLE tasks ADD COLUMN fair_at REAL;
      UPDATE tasks SET fair_at = created_at WHERE status IN ('working','input_required');
      DROP INDEX tasks_runnable;
      CREATE INDEX tasks_fair ON tasks (fair_at, created_at) WHERE runnable = 1;
      CREATE INDEX tasks_owner_fair ON tasks (tenant, principal, fair_at) WHERE runnable = 1;
    `,
  },
  {
    version: 12,
    name: 'step-order-and-tool-versions',
    // seq: the order in which a task's steps were done (steps done before are NULL: their order is unknown).
    // tool_version: the version of the tool's code that created the task (NULL: before versions, or none declared).
    sql: `
      ALTER TABLE task_steps ADD COLUMN seq INTEGER;
      ALTER TABLE tasks ADD COLUMN tool_version TEXT;
    `,
  },
  {
    version: 13,
    name: 'operator-search',
    // The operators' search (TaskAdmin.list) reads a page in time order without sorting: newest first over all
    // tenants (tasks_created), within one tenant (tasks_tenant_created: a tenant-scoped operator), of one tool
    // (tasks_tool_created), or by last change (tasks_updated, which also bounds the overview's windows). The id ends
    // each key: it breaks ties of one millisecond, as the keyset cursor does.
    sql: `
      CREATE INDEX tasks_created ON tasks (created_at, id);
      CREATE INDEX tasks_tenant_created ON tasks (tenant, created_at, id);
      CREATE INDEX tasks_tool_created ON tasks (tool, created_at, id);
      CREATE INDEX tasks_updated ON tasks (updated_at, id);
    `,
  },
  {
    version: 14,
    name: 'status-history-and-step-timings',
    // started_at, saved_at: when a step's successful attempt started and when its result was saved (steps saved
    // before are NULL: unknown). created_message: the status message a task was created with, as status_message
    // keeps it ('' none; NULL: created before this migration, or by an older process), which is the first entry of
    // its history; written by the insert, so a creation writes no other row. task_history: each later change of
    // status, with its time and the status message the task had after it (as the row keeps it: sealed when the
    // task's payloads are), written by a trigger in the transaction of the write that changed the status, whatever
    // wrote it (an older process too). A change to working that set no message records none (an answered task
    // resumes). The last 100 changes of a task are kept. Keyed first by the task's creation time, so that the
    // entries of tasks created together (which mostly change together) share pages: keyed by the random id alone,
    // every change dirtied a page of its own and a group commit of run endings wrote half as many per second. For
    // the same reason a trigger, not a foreign key (which wants an index by id), deletes them with their task.
    sql: `
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
    `,
  },
  {
    version: 15,
    name: 'tool-errors-and-retries',
    // tool_error: the task completed with a result that is a tool error (isError), written with the result by the
    // same statement (the result may be sealed; the flag never is). A task's outcome is its status, and tool_error
    // for a completed task that has it. Completed tasks stored before are marked from their result (plain JSON), or,
    // for a sealed result that SQL cannot read, from the error a thrown tool error keeps beside it (`failure`). A
    // sealed result that reported isError without throwing stays unmarked. tasks_tool_errors: the tool errors in
    // creation order (the search of them, and their count). retry_of: the task an operator's retry copied this one
    // from; tasks_retries finds the retries of a task.
    sql: `
      ALTER TABLE tasks ADD COLUMN tool_error INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE tasks ADD COLUMN retry_of TEXT;
      UPDATE tasks SET tool_error = 1 WHERE status = 'completed' AND (failure IS NOT NULL
        OR CASE WHEN json_valid(result) THEN json_extract(result, '$.isError') = 1 ELSE 0 END);
      CREATE INDEX tasks_tool_errors ON tasks (created_at, id) WHERE tool_error = 1;
      CREATE INDEX tasks_retries ON tasks (retry_of, created_at, id) WHERE retry_of IS NOT NULL;
    `,
  },
  {
    version: 16,
    name: 'shown-progress-and-version-waits',
    // progress: the progress a task's handler showed last (JSON {progress, total?}, sealed with the task's payloads;
    // NULL: none yet), so that a replay, on any process, shows nothing behind it. version_wait: the attempt of a
    // runnable task at which a process that cannot run its version found it unclaimed for a while (NULL: never);
    // while the task is working at that attempt (no run claimed it since), its owner is told it waits for a server
    // running its version. Nullable columns without defaults: nothing is rewritten.
    sql: `
      ALTER TABLE tasks ADD COLUMN progress TEXT;
      ALTER TABLE tasks ADD COLUMN version_wait INTEGER;
    `,
  },
  {
    version: 17,
    name: 'fair-line-ties',
    // placed_at: when a task took its place in line (sql/conditions.ts, FAIR_PLACE), so that at one place the first
    // to take it is claimed first, not the oldest task (NULL: placed before this migration, or by an older process:
    // first among its place). tasks_fair orders the line by it (same name and rows, so the claims of an older process
    // on the file still read it). A nullable column without a default: no table rewrite.
    sql: `
      ALTER TABLE tasks ADD COLUMN placed_at INTEGER;
      DROP INDEX tasks_fair;
      CREATE INDEX tasks_fair ON tasks (fair_at, placed_at, created_at) WHERE runnable = 1;
    `,
  },
  {
    version: 18,
    name: 'stored-bytes-per-owner',
    // owner_bytes: the bytes each owner's kept tasks store, for the byte quota (stores/stored-bytes.ts): arguments,
    // results, step values, input requests and answers, as stored (a sealed value counts sealed). Kept by triggers in
    // the transaction of every write that changes them, whatever wrote it (an older process too); a deleted task
    // takes its bytes with it (its steps and inputs summed before the cascade deletes them), and an owner left with
    // none loses its row. A step written again under its name is an update, not a REPLACE (whose delete fires no
    // trigger). Filled once here from the tasks stored before.
    sql: `
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
    `,
  },
  {
    version: 19,
    name: 'error-outcomes',
    // error_outcome: the word a failed task's error gives as `data.outcome` (stores/error-outcome.ts: e.g. the
    // gateway's `unknown` for a call that may or may not have been done), written with the error by the same
    // statement and never sealed (a word from a short alphabet, as tool_error is a flag), so that operators find such
    // tasks when errors are sealed too. Filled here from the plain errors stored before (a sealed one stays NULL).
    // tasks_error_outcomes: the search of them, in creation order. A nullable column: nothing is rewritten.
    sql: `
      ALTER TABLE tasks ADD COLUMN error_outcome TEXT;
      UPDATE tasks SET error_outcome = json_extract(error, '$.data.outcome')
      WHERE status = 'failed' AND json_valid(error) AND json_type(error, '$.data.outcome') = 'text'
        AND length(json_extract(error, '$.data.outcome')) BETWEEN 1 AND 32
        AND json_extract(error, '$.data.outcome') GLOB '[a-z]*'
        AND json_extract(error, '$.data.outcome') NOT GLOB '*[^a-z0-9_]*';
      CREATE INDEX tasks_error_outcomes ON tasks (error_outcome, created_at, id) WHERE error_outcome IS NOT NULL;
    `,
  },
  concurrencySlotsMigration,
  {
    version: 21,
    name: 'live-input-waits',
    // tasks_live_input: the tasks whose run waits for live input (ctx.waitForInput: input_required under a lease),
    // by lease end, so that the sweep finding those whose lease lapsed reads them only, not every task waiting for
    // its owner's input. An index only: older processes keep working.
    sql: `
      CREATE INDEX tasks_live_input ON tasks (lease_until)
        WHERE status = 'input_required' AND lease_owner IS NOT NULL;
    `,
  },
];
