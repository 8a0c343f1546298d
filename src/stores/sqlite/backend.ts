// The SQLite backend: tasks and legacy sessions in one file, and the requestState secret stored beside them.
import {
  backendCipher,
  freshSecret,
  SEALED_STATE_SECRET_KEY,
  SECRET_AT,
  sealedSecretFor,
  STATE_SECRET_KEY,
  type Backend,
  type BackendOptions,
} from '../../tasks/backend.js';
import type { PayloadCipher } from '../../tasks/payload-cipher.js';
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

/** The stored requestState secret: sealed with the cipher when there is one (a clear one is sealed, then dropped). */
function storedSecret(db: SqliteDatabase, cipher: PayloadCipher | undefined): string {
  if (cipher === undefined) return getOrCreateMeta(db, STATE_SECRET_KEY, freshSecret);
  const plain = readMeta(db, STATE_SECRET_KEY);
  const sealed = getOrCreateMeta(db, SEALED_STATE_SECRET_KEY, () => sealedSecretFor(cipher, plain));
  if (plain !== undefined) deleteMeta(db, STATE_SECRET_KEY);
  return cipher.open(sealed, SECRET_AT);
}

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
    stateSecret = options.stateSecret ?? storedSecret(tasks.db, cipher);
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
