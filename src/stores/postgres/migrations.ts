// Numbered schema migrations for the PostgreSQL store, applied under an advisory lock so replicas can start together.
// A new migration keeps older releases working on the schema (nullable columns, new tables and indexes), or else
// records its version under `serve_min_migration` in server_meta in its own SQL, so older releases refuse to serve
// the store (a rollback) rather than misread it: see ../schema-fit.ts.
import type pg from 'pg';
import { translate } from './errors.js';
import { schemaNames } from './names.js';
import { SERVE_FLOOR_KEY } from '../schema-fit.js';
import { errorOutcomesMigration } from './migration-error-outcomes.js';
import { storedBytesMigration } from './migration-stored-bytes.js';
import { concurrencyMigration } from './migration-concurrency.js';
import { liveInputMigration } from './migration-live-input.js';

export interface PostgresMigration {
  version: number;
  name: string;
  /** SQL with `${s}` standing for the quoted schema name. */
  sql: (s: string) => string;
}

// Times are epoch milliseconds (bigint) passed in by the caller, never the database clock, so injected time works.
// Payload columns are text: they hold JSON, or a cipher's sealed string.
export const postgresMigrations: readonly PostgresMigration[] = [
  {
    version: 1,
    name: 'tasks',
    sql: (s) => `
      CREATE TABLE ${s}.tasks (
        id text PRIMARY KEY,
        tenant text NOT NULL,
        principal text NOT NULL,
        tool text NOT NULL,
        args text NOT NULL,
        status text NOT NULL CHECK (status IN ('working','input_required','completed','failed','cancelled')),
        status_message text,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        ttl_ms bigint,
        poll_interval_ms bigint,
        expires_at bigint,
        result text,
        error text,
        replay_after_crash boolean NOT NULL,
        client_caps jsonb NOT NULL,
        runnable boolean NOT NULL DEFAULT true,
        cancel_requested boolean NOT NULL DEFAULT false,
        attempt integer NOT NULL DEFAULT 0,
        lease_owner text,
        lease_until bigint,
        sealed boolean NOT NULL DEFAULT false
      );
      CREATE INDEX tasks_runnable ON ${s}.tasks (created_at) WHERE runnable;
      CREATE INDEX tasks_expiry ON ${s}.tasks (expires_at) WHERE expires_at IS NOT NULL;
      CREATE INDEX tasks_owner_active ON ${s}.tasks (tenant, principal)
        WHERE status IN ('working','input_required');
      CREATE TABLE ${s}.task_steps (
        task_id text NOT NULL REFERENCES ${s}.tasks (id) ON DELETE CASCADE,
        name text NOT NULL,
        value text NOT NULL,
        PRIMARY KEY (task_id, name)
      );
      CREATE TABLE ${s}.task_inputs (
        task_id text NOT NULL REFERENCES ${s}.tasks (id) ON DELETE CASCADE,
        key text NOT NULL,
        request text,
        answer text,
        superseded boolean NOT NULL DEFAULT false,
        asked_at bigint NOT NULL,
        answered_at bigint,
        PRIMARY KEY (task_id, key)
      );
    `,
  },
  {
    version: 2,
    name: 'server-meta',
    sql: (s) => `CREATE TABLE ${s}.server_meta (key text PRIMARY KEY, value text NOT NULL);`,
  },
  {
    version: 3,
    name: 'legacy-sessions-and-owner-listing',
    sql: (s) => `
      CREATE TABLE ${s}.sessions (
        id text PRIMARY KEY,
        tenant text NOT NULL,
        principal text NOT NULL,
        state jsonb NOT NULL,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL
      );
      CREATE INDEX sessions_expiry ON ${s}.sessions (expires_at);
      CREATE INDEX tasks_owner_created ON ${s}.tasks (tenant, principal, created_at, id);
    `,
  },
  {
    version: 4,
    name: 'status-index',
    // Metrics count tasks per status with index-only scans instead of a scan of the whole table.
    sql: (s) => `CREATE INDEX tasks_status ON ${s}.tasks (status);`,
  },
  {
    version: 5,
    name: 'session-requests',
    // Server→client requests of legacy sessions: the answer may reach another replica than the one that asked.
    sql: (s) => `
      CREATE TABLE ${s}.session_requests (
        session_id text NOT NULL REFERENCES ${s}.sessions (id) ON DELETE CASCADE,
        request_id text NOT NULL,
        origin text NOT NULL,
        answer jsonb,
        opened_at bigint NOT NULL,
        PRIMARY KEY (session_id, request_id)
      );
      CREATE INDEX session_requests_answered ON ${s}.session_requests (origin) WHERE answer IS NOT NULL;
      CREATE INDEX session_requests_opened ON ${s}.session_requests (opened_at);
    `,
  },
  {
    version: 6,
    name: 'task-revision',
    // Orders the snapshots a process gets from its own commits and from reads (no table rewrite: constant default).
    sql: (s) => `ALTER TABLE ${s}.tasks ADD COLUMN revision bigint NOT NULL DEFAULT 0;`,
  },
  {
    version: 7,
    name: 'waits-idempotency-failures',
    // wake_at: a working task without a lease that runs again at that time (a retry backoff, a sleep); it is not
    // runnable (not in tasks_runnable) until then. idempotency_key: unique per owner and tool while the task exists.
    // failure: the error a tool threw, kept for operators. task_step_attempts: failed attempts of steps.
    // tasks_live_expiry: the TTL sweep reads the unfinished tasks that expired only. The new columns are nullable
    // without a default: no table rewrite.
    sql: (s) => `
      ALTER TABLE ${s}.tasks ADD COLUMN wake_at bigint, ADD COLUMN idempotency_key text, ADD COLUMN failure text;
      CREATE INDEX tasks_wake ON ${s}.tasks (wake_at) WHERE wake_at IS NOT NULL;
      CREATE INDEX tasks_live_expiry ON ${s}.tasks (expires_at)
        WHERE expires_at IS NOT NULL AND status IN ('working','input_required');
      CREATE UNIQUE INDEX tasks_idempotency ON ${s}.tasks (idempotency_key, tenant, principal, tool)
        WHERE idempotency_key IS NOT NULL;
      CREATE TABLE ${s}.task_step_attempts (
        task_id text NOT NULL REFERENCES ${s}.tasks (id) ON DELETE CASCADE,
        name text NOT NULL,
        failed integer NOT NULL,
        last_failure text NOT NULL,
        updated_at bigint NOT NULL,
        PRIMARY KEY (task_id, name)
      );
    `,
  },
  {
    version: 8,
    name: 'consumed-keys',
    // One-time keys: the nonce of each MRTR requestState a round acted on, until the state expires (then swept).
    sql: (s) => `
      CREATE TABLE ${s}.consumed_keys (key text PRIMARY KEY, expires_at bigint NOT NULL);
      CREATE INDEX consumed_keys_expiry ON ${s}.consumed_keys (expires_at);
    `,
  },
  {
    version: 9,
    name: 'sessions-by-owner',
    // The per-principal session cap counts an owner's live sessions.
    sql: (s) => `CREATE INDEX sessions_owner ON ${s}.sessions (tenant, principal, expires_at);`,
  },
  {
    version: 10,
    name: 'fair-claiming',
    // fair_at: a task's place in line (sql/creation.ts); unfinished tasks written before keep their order by taking
    // their creation time (a nullable column without a default: no table rewrite), and a task an older replica
    // creates without a place goes first (NULLS FIRST). tasks_fair replaces tasks_runnable (same rows, claimed in
    // line order); tasks_owner_fair finds an owner's last place.
    sql: (s) => `
      ALTER TABLE ${s}.tasks ADD COLUMN fair_at double precision;
      UPDATE ${s}.tasks SET fair_at = created_at WHERE status IN ('working','input_required');
      DROP INDEX ${s}.tasks_runnable;
      CREATE INDEX tasks_fair ON ${s}.tasks (fair_at NULLS FIRST, created_at) WHERE runnable;
      CREATE INDEX tasks_owner_fair ON ${s}.tasks (tenant, principal, fair_at) WHERE runnable;
    `,
  },
  {
    version: 11,
    name: 'step-order-and-tool-versions',
    // seq: the order in which a task's steps were done (steps done before are NULL: their order is unknown).
    // tool_version: the version of the tool's code that created the task (NULL: before versions, or none declared).
    // Nullable columns without defaults: no table rewrite.
    sql: (s) => `
      ALTER TABLE ${s}.task_steps ADD COLUMN seq integer;
      ALTER TABLE ${s}.tasks ADD COLUMN tool_version text;
    `,
  },
  {
    version: 12,
    name: 'operator-search',
    // The operators' search (TaskAdmin.list) reads a page in time order without sorting: newest first over all
    // tenants (tasks_created), within one tenant (tasks_tenant_created: a tenant-scoped operator), of one tool
    // (tasks_tool_created), or by last change (tasks_updated, which also bounds the overview's windows). The id ends
    // each key: it breaks ties of one millisecond, as the keyset cursor does. IF NOT EXISTS: on a large table an
    // operator may build them beforehand with CREATE INDEX CONCURRENTLY (same names), and writes are not held up.
    sql: (s) => `
      CREATE INDEX IF NOT EXISTS tasks_created ON ${s}.tasks (created_at, id);
      CREATE INDEX IF NOT EXISTS tasks_tenant_created ON ${s}.tasks (tenant, created_at, id);
      CREATE INDEX IF NOT EXISTS tasks_tool_created ON ${s}.tasks (tool, created_at, id);
      CREATE INDEX IF NOT EXISTS tasks_updated ON ${s}.tasks (updated_at, id);
    `,
  },
  {
    version: 13,
    name: 'status-history-and-step-timings',
    // started_at, saved_at: when a step's successful attempt started and when its result was saved (steps saved
    // before are NULL: unknown). created_message: the status message a task was created with, as status_message
    // keeps it ('' none; NULL: created before this migration, or by an older replica), which is the first entry of
    // its history; written by the insert, so a creation writes no other row. Nullable columns without defaults: no
    // table rewrite. task_history: each later change of status, with its time and the status message the task had
    // after it (as the row keeps it: sealed when the task's payloads are), written by a row trigger in the statement
    // that changed the status, whatever wrote it (an older replica too), and only when the status changed (renewals
    // and step writes pay nothing). A change to working that set no message records none (an answered task
    // resumes). The last 100 changes of a task are kept; the tasks row lock orders a task's entries.
    sql: (s) => `
      ALTER TABLE ${s}.task_steps ADD COLUMN started_at bigint, ADD COLUMN saved_at bigint;
      ALTER TABLE ${s}.tasks ADD COLUMN created_message text;
      CREATE TABLE ${s}.task_history (
        task_id text NOT NULL REFERENCES ${s}.tasks (id) ON DELETE CASCADE,
        seq integer NOT NULL,
        at bigint NOT NULL,
        status text NOT NULL,
        message text,
        PRIMARY KEY (task_id, seq)
      );
      CREATE FUNCTION ${s}.task_history_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE next integer;
      BEGIN
        SELECT coalesce(max(seq), 0) + 1 INTO next FROM ${s}.task_history WHERE task_id = NEW.id;
        INSERT INTO ${s}.task_history (task_id, seq, at, status, message)
        VALUES (NEW.id, next, NEW.updated_at, NEW.status,
          CASE WHEN NEW.status = 'working' AND NEW.status_message IS NOT DISTINCT FROM OLD.status_message THEN NULL
            ELSE NEW.status_message END);
        DELETE FROM ${s}.task_history WHERE task_id = NEW.id AND seq <= next - 100;
        RETURN NULL;
      END $$;
      CREATE TRIGGER task_history_changed AFTER UPDATE OF status ON ${s}.tasks FOR EACH ROW
        WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION ${s}.task_history_changed();
    `,
  },
  {
    version: 14,
    name: 'tool-errors-and-retries',
    // tool_error: the task completed with a result that is a tool error (isError), written with the result by the
    // same statement (the result may be sealed; the flag never is). A task's outcome is its status, and tool_error
    // for a completed task that has it. A constant default and a nullable column: no table rewrite. Completed tasks
    // stored before are marked from their result (plain JSON), or, for a sealed result that SQL cannot read, from the
    // error a thrown tool error keeps beside it (`failure`); a sealed result that reported isError without throwing
    // stays unmarked. tasks_tool_errors: the tool errors in creation order (the search of them, and their count).
    // retry_of: the task an operator's retry copied this one from; tasks_retries finds the retries of a task.
    sql: (s) => `
      ALTER TABLE ${s}.tasks ADD COLUMN tool_error boolean NOT NULL DEFAULT false, ADD COLUMN retry_of text;
      UPDATE ${s}.tasks SET tool_error = true WHERE status = 'completed' AND (failure IS NOT NULL
        OR CASE WHEN left(result, 1) = '{' THEN (result::jsonb -> 'isError') = 'true'::jsonb ELSE false END);
      CREATE INDEX tasks_tool_errors ON ${s}.tasks (created_at, id) WHERE tool_error;
      CREATE INDEX tasks_retries ON ${s}.tasks (retry_of, created_at, id) WHERE retry_of IS NOT NULL;
    `,
  },
  {
    version: 15,
    name: 'shown-progress-and-version-waits',
    // progress: the progress a task's handler showed last (JSON {progress, total?}, sealed with the task's payloads;
    // NULL: none yet), so that a replay, on any replica, shows nothing behind it. version_wait: the attempt of a
    // runnable task at which a replica that cannot run its version found it unclaimed for a while (NULL: never);
    // while the task is working at that attempt (no run claimed it since), its owner is told it waits for a server
    // running its version. Nullable columns without defaults: no table rewrite.
    sql: (s) => `ALTER TABLE ${s}.tasks ADD COLUMN progress text, ADD COLUMN version_wait integer;`,
  },
  {
    version: 16,
    name: 'fair-line-ties',
    // placed_at: when a task took its place in line (sql/fragments.ts, fairPlace), so that at one place the first to
    // take it is claimed first, not the oldest task (NULL: placed before this migration, or by an older replica:
    // first among its place). tasks_fair orders the line by it (the same rows: runnable tasks only). A nullable
    // column without a default: no table rewrite.
    sql: (s) => `
      ALTER TABLE ${s}.tasks ADD COLUMN placed_at bigint;
      DROP INDEX ${s}.tasks_fair;
      CREATE INDEX tasks_fair ON ${s}.tasks (fair_at NULLS FIRST, placed_at NULLS FIRST, created_at) WHERE runnable;
    `,
  },
  // 17: the bytes each owner's kept tasks store, counted by triggers (a file of its own: its SQL is long).
  storedBytesMigration,
  // 18: the outcome word of a failed task's error, kept unsealed for operators' searches.
  errorOutcomesMigration,
  // 19: concurrency limits per key (a file of its own).
  concurrencyMigration,
  // 20: the index of live input waits, for the sweep of those whose lease lapsed.
  liveInputMigration,
];

/** One lock key per schema, so stores on different schemas of one database never wait for each other. */
const LOCK_SQL = `SELECT pg_advisory_xact_lock(hashtext('durable-mcp:migrate:' || $1::text))`;

/**
 * Creates the schema if needed and applies every migration not yet recorded in `<schema>.schema_migrations`,
 * all in one transaction holding a transaction-level advisory lock: concurrent starters wait, then find
 * nothing left to do. Returns the versions applied by this call.
 */
export async function migrate(pool: pg.Pool, schema?: string): Promise<number[]> {
  const { schema: name, quoted: s } = schemaNames(schema);
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw translate(err);
  }
  try {
    await client.query('BEGIN');
    await client.query(LOCK_SQL, [name]);
    // Look before creating: CREATE SCHEMA IF NOT EXISTS still needs the CREATE privilege on the database.
    const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [name]);
    if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${s}`);
    await client.query(`
      CREATE TABLE IF NOT EXISTS ${s}.schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
    const done = await client.query<{ version: number }>(`SELECT version FROM ${s}.schema_migrations`);
    const applied = new Set(done.rows.map((r) => r.version));
    const now: number[] = [];
    for (const m of postgresMigrations) {
      if (applied.has(m.version)) continue;
      await client.query(m.sql(s));
      await client.query(`INSERT INTO ${s}.schema_migrations (version, name) VALUES ($1, $2)`, [
        m.version,
        m.name,
      ]);
      now.push(m.version);
    }
    await client.query('COMMIT');
    client.release();
    return now;
  } catch (err) {
    const broken = await client.query('ROLLBACK').then(
      () => undefined,
      (e: unknown) => (e instanceof Error ? e : new Error('rollback failed')),
    );
    client.release(broken);
    throw privilegeError(err, name) ?? translate(err);
  }
}

/** A migration refused for want of rights: what the role lacks, and how to migrate apart. */
function privilegeError(err: unknown, schema: string): Error | undefined {
  if ((err as { code?: unknown } | null)?.code !== '42501') return undefined;
  const why = err instanceof Error ? err.message : String(err);
  return new Error(
    `cannot migrate schema "${schema}": ${why}. Creating the schema needs CREATE on the database, changing it needs ` +
      'ownership of the schema: run `durable-mcp migrate` as a role with those rights, and start the servers ' +
      'with --no-migrate (a runtime role then needs only USAGE on the schema and rights on its tables).',
  );
}

/** The versions the schema has applied, in order (none before the schema exists): one cheap read at open. */
export async function appliedMigrations(pool: pg.Pool, schema?: string): Promise<number[]> {
  const { quoted: s } = schemaNames(schema);
  try {
    const table = await pool.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [
      `${s}.schema_migrations`,
    ]);
    if (table.rows[0]?.t === null || table.rows[0] === undefined) return [];
    const done = await pool.query<{ version: number }>(
      `SELECT version FROM ${s}.schema_migrations ORDER BY version`,
    );
    return done.rows.map((r) => r.version);
  } catch (err) {
    throw translate(err);
  }
}

/** What the schema holds: the migrations applied, in order, and its serve floor (schema-fit.ts) if any. */
export async function postgresSchemaState(
  pool: pg.Pool,
  schema?: string,
): Promise<{ applied: number[]; floor?: string }> {
  const applied = await appliedMigrations(pool, schema);
  const { quoted: s } = schemaNames(schema);
  try {
    const meta = await pool.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [
      `${s}.server_meta`,
    ]);
    if (meta.rows[0]?.t === null || meta.rows[0] === undefined) return { applied };
    const floor = await pool.query<{ value: string }>(`SELECT value FROM ${s}.server_meta WHERE key = $1`, [
      SERVE_FLOOR_KEY,
    ]);
    return { applied, floor: floor.rows[0]?.value };
  } catch (err) {
    throw translate(err);
  }
}

/** The versions this release needs that the schema has not applied (all of them before the schema exists). */
export async function pendingMigrations(pool: pg.Pool, schema?: string): Promise<number[]> {
  const applied = new Set(await appliedMigrations(pool, schema));
  return postgresMigrations.map((m) => m.version).filter((v) => !applied.has(v));
}
