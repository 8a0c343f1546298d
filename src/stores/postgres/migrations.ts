// Numbered schema migrations for the PostgreSQL store (the `NNNN-name.sql` files of ./migrations/), applied under an
// advisory lock so replicas can start together.
// A new migration keeps older releases working on the schema (nullable columns, new tables and indexes), or else
// records its version under `serve_min_migration` in server_meta in its own SQL, so older releases refuse to serve
// the store (a rollback) rather than misread it: see ../schema-fit.ts.
import type pg from 'pg';
import { translate } from './errors.js';
import { schemaNames } from './names.js';
import { SERVE_FLOOR_KEY } from '../schema-fit.js';
import { readMigrationFiles } from '../migration-files.js';

export interface PostgresMigration {
  version: number;
  name: string;
  /** The migration's SQL for the quoted schema name `s`: its file's text, `:schema` replaced by `s`. */
  sql: (s: string) => string;
}

/** The `NNNN-name.sql` files of ./migrations/, in order. */
export const postgresMigrations: readonly PostgresMigration[] = readMigrationFiles(
  new URL('./migrations/', import.meta.url),
).map(({ version, name, sql }) => ({ version, name, sql: (s) => sql.replace(/:schema\b/g, () => s) }));

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
