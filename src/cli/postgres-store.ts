// What the commands use of the PostgreSQL store, in one module that they import only when a store is a postgres://
// URL (`await import('../postgres-store.js')`): it loads the `pg` driver, which a command on a SQLite file never needs.
import pg from 'pg';
import { postgresSchemaState } from '../stores/postgres/migrations.js';
import { redactUrl } from '../stores/postgres/backend.js';

export { createPostgresBackend, migratePostgres } from '../stores/postgres/backend.js';
export { postgresMigrations } from '../stores/postgres/migrations.js';
export { createPostgresTaskStore } from '../stores/postgres/task-store.js';
export { DEFAULT_SCHEMA } from '../stores/postgres/names.js';

/** Where a store is, for what a command prints: its URL without the password, and the schema. */
export const postgresWhere = (url: string, schema: string): string => `${redactUrl(url)} schema ${schema}`;

/** The schema state of a store, read on a connection of its own (closed after). */
export async function readPostgresSchemaState(
  url: string,
  schema: string,
): Promise<{ applied: number[]; floor?: string }> {
  const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 10_000 });
  pool.on('error', () => undefined);
  try {
    return await postgresSchemaState(pool, schema);
  } finally {
    await pool.end();
  }
}
