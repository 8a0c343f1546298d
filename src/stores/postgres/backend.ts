// The PostgreSQL backend for several replicas: tasks and legacy sessions in one schema, and the requestState secret
// stored there once for all of them.
import pg from 'pg';
import { backendCipher, type Backend, type BackendOptions } from '../../tasks/backend.js';
import { deleteMeta, getOrCreateMeta, readMeta } from './meta.js';
import { migrate, postgresMigrations, postgresSchemaState } from './migrations.js';
import { storedSecret, type AsyncMeta } from '../core/secret.js';
import { schemaFit } from '../schema-fit.js';
import { DEFAULT_SCHEMA } from './names.js';
import { createPostgresTaskStore } from './task-store.js';

/**
 * A `pg.Pool` (from the `pg` package), described only as far as this signature needs, so that the published types
 * do not depend on `@types/pg`.
 */
export interface PostgresPool {
  query(...args: never[]): unknown;
  connect(...args: never[]): unknown;
}

export interface PostgresBackendOptions extends BackendOptions {
  /** `postgres://user:password@host:port/database`; without it (and without `pool`) the PG* environment is used. */
  connectionString?: string;
  /** An existing `pg.Pool` (shared with other users); not ended by close(). */
  pool?: PostgresPool;
  /** Schema holding the tables (default `durable_mcp`). */
  schema?: string;
  /** Connections in the backend's own pool (default 10). */
  poolSize?: number;
  /** Server-side statement_timeout of the backend's own connections (default 30 s; 0 keeps the server's). */
  statementTimeoutMs?: number;
  /** Client-side bound on connecting and on the wait for a pooled connection (default 5 s). */
  connectTimeoutMs?: number;
  /** Apply pending migrations on open (default true; false when `durable-mcp migrate` runs them apart). */
  migrate?: boolean;
  /** Named prepared statements (default true; off behind PgBouncer in transaction mode before 1.21). */
  preparedStatements?: boolean;
}

/** Hides the password of a connection string for logs. */
export const redactUrl = (s: string): string => s.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');

/** `server_meta` of the schema, for the stored requestState secret (core/secret.ts); migrated already. */
const metaOf = (pool: pg.Pool, schema: string): AsyncMeta => ({
  read: (key) => readMeta(pool, schema, key),
  getOrCreate: (key, create) => getOrCreateMeta(pool, schema, key, create, false),
  delete: (key) => deleteMeta(pool, schema, key),
});

/**
 * Migrates the schema (or, without migrations on open, refuses at once a schema this release cannot use, saying
 * what to run), and refuses a schema a newer release made unservable for this one; returns the highest migration
 * applied and the newer release's migrations the schema has.
 */
async function schemaLevel(
  pool: pg.Pool,
  schema: string,
  migrateNow: boolean,
): Promise<{ migration: number; newer: number[] }> {
  if (migrateNow) await migrate(pool, schema);
  const { applied, floor } = await postgresSchemaState(pool, schema);
  const pending = postgresMigrations.map((m) => m.version).filter((v) => !applied.includes(v));
  if (pending.length > 0)
    throw new Error(
      `schema "${schema}" lacks migrations ${pending.join(', ')} this release needs: run ` +
        '`durable-mcp migrate` first (or start without --no-migrate)',
    );
  const known = postgresMigrations.map((m) => m.version);
  const fit = schemaFit(`schema "${schema}"`, known, applied, floor);
  if (!fit.ok) throw new Error(fit.reason);
  return { migration: Math.max(0, ...applied), newer: fit.newer };
}

/**
 * Opens the backend: migrates (or checks) the schema and reads (or creates) the shared secret, so a backend that
 * cannot be reached fails here, with a given secret too.
 */
export async function createPostgresBackend(options: PostgresBackendOptions = {}): Promise<Backend> {
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const cipher = backendCipher(options);
  const tasks = createPostgresTaskStore({
    connectionString: options.connectionString,
    pool: options.pool as pg.Pool | undefined,
    schema,
    poolSize: options.poolSize,
    statementTimeoutMs: options.statementTimeoutMs,
    connectTimeoutMs: options.connectTimeoutMs,
    migrate: options.migrate,
    preparedStatements: options.preparedStatements,
    cipher,
    encrypt: options.encrypt,
  });
  let stateSecret: string;
  let level: { migration: number; newer: number[] };
  try {
    level = await schemaLevel(tasks.pool, schema, options.migrate !== false);
    stateSecret = options.stateSecret ?? (await storedSecret(metaOf(tasks.pool, schema), cipher));
  } catch (err) {
    await tasks.close();
    throw err;
  }
  const where =
    options.connectionString === undefined
      ? 'PostgreSQL'
      : `PostgreSQL ${redactUrl(options.connectionString)}`;
  return {
    tasks,
    sessions: tasks.sessions,
    stateSecret,
    description: `${where} schema ${schema}`,
    schema,
    migration: level.migration,
    newerMigrations: level.newer,
    close: () => tasks.close(),
  };
}

export interface MigratePostgresOptions {
  connectionString?: string;
  /** An existing `pg.Pool`; not ended. */
  pool?: PostgresPool;
  schema?: string;
}

/** Applies pending migrations (safe while other processes start or run); returns the versions it applied. */
export async function migratePostgres(options: MigratePostgresOptions = {}): Promise<number[]> {
  const own =
    options.pool === undefined
      ? new pg.Pool({ connectionString: options.connectionString, max: 1 })
      : undefined;
  try {
    return await migrate(own ?? (options.pool as pg.Pool), options.schema);
  } finally {
    await own?.end();
  }
}
