// PostgreSQL stores for the store's own tests: an admin pool, stores on the file's schema or on fresh ones, and
// everything closed and dropped after the suite.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll } from 'vitest';
import {
  createPostgresTaskStore,
  type PostgresTaskStoreOptions,
} from '../../src/stores/postgres/task-store.js';
import { TEST_POSTGRES_URL } from './postgres-url.js';

export interface PostgresStores {
  readonly admin: pg.Pool;
  /** The suite's own schema (dropped afterwards like the fresh ones). */
  readonly schema: string;
  /** A store (on the suite's schema unless `options.schema` says otherwise), closed after the suite. */
  open(options?: PostgresTaskStoreOptions): ReturnType<typeof createPostgresTaskStore>;
  /** A new schema name, dropped after the suite. */
  freshSchema(): string;
}

/** Call inside the suite's definition (withPostgres): registers the clean-up. */
export function usePostgresStores(prefix: string): PostgresStores {
  const admin = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max: 3 });
  const schema = `${prefix}_${randomBytes(5).toString('hex')}`;
  const schemas = new Set<string>([schema]);
  const opened: ReturnType<typeof createPostgresTaskStore>[] = [];
  afterAll(async () => {
    for (const store of opened.splice(0)) await store.close();
    for (const name of schemas)
      await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(name)} CASCADE`);
    await admin.end();
  });
  return {
    admin,
    schema,
    open(options = {}) {
      const store = createPostgresTaskStore({
        connectionString: TEST_POSTGRES_URL,
        schema,
        poolSize: 4,
        ...options,
      });
      opened.push(store);
      return store;
    },
    freshSchema() {
      const name = `${schema}_${randomBytes(3).toString('hex')}`;
      schemas.add(name);
      return name;
    },
  };
}
