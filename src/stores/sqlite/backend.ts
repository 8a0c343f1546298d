// The SQLite backend: tasks and legacy sessions in one file, and the requestState secret stored beside them.
import { backendCipher, type Backend, type BackendOptions } from '../../tasks/backend.js';
import {
  pendingSqliteMigrations,
  sqliteMigrationLevel,
  sqliteSchemaState,
  deleteMeta,
  getOrCreateMeta,
  readMeta,
  type SqliteDatabase,
} from './database.js';
import { migrations } from './migrations/index.js';
import { createSqliteTaskStore } from './task-store.js';
import { storedSecret, type SyncMeta } from '../core/secret.js';
import { schemaFit } from '../schema-fit.js';

export interface SqliteBackendOptions extends BackendOptions {
  /** The database file (default `./data/tasks.db`; its folder is created). `:memory:` keeps nothing. */
  path?: string;
  /** How long a write waits for another process holding the file's lock (default 5 s). */
  busyTimeoutMs?: number;
  /** Apply pending migrations on open (default true); false refuses a file that lacks any, naming them. */
  migrate?: boolean;
}

export const DEFAULT_SQLITE_PATH = './data/tasks.db';

/** `server_meta` of the file, for the stored requestState secret (core/secret.ts). */
const metaOf = (db: SqliteDatabase): SyncMeta => ({
  read: (key) => readMeta(db, key),
  getOrCreate: (key, create) => getOrCreateMeta(db, key, create),
  delete: (key) => deleteMeta(db, key),
});

/** The newer release's migrations the file has, or the refusal of a file this release cannot serve (a rollback). */
function servable(path: string, db: SqliteDatabase): number[] {
  const { applied, floor } = sqliteSchemaState(db);
  const known = migrations.map((m) => m.version);
  const fit = schemaFit(path, known, applied, floor);
  if (!fit.ok) throw new Error(fit.reason);
  return fit.newer;
}

export function createSqliteBackend(options: SqliteBackendOptions = {}): Backend {
  const path = options.path ?? DEFAULT_SQLITE_PATH;
  const pending = options.migrate === false ? pendingSqliteMigrations(path) : [];
  if (pending.length > 0)
    throw new Error(
      `${path} lacks migrations ${pending.join(', ')} this release needs: run \`durable-mcp migrate\` first ` +
        '(or start without --no-migrate)',
    );
  const cipher = backendCipher(options);
  const tasks = createSqliteTaskStore({
    path,
    busyTimeoutMs: options.busyTimeoutMs,
    cipher,
    encrypt: options.encrypt,
  });
  let stateSecret: string;
  let newer: number[];
  try {
    newer = servable(path, tasks.db);
    stateSecret = options.stateSecret ?? storedSecret(metaOf(tasks.db), cipher);
  } catch (err) {
    void tasks.close();
    throw err;
  }
  return {
    tasks,
    sessions: tasks.sessions,
    stateSecret,
    description: `SQLite ${path}`,
    migration: sqliteMigrationLevel(tasks.db),
    newerMigrations: newer,
    close: () => tasks.close(),
  };
}
