// The SQLite backend: tasks and legacy sessions in one file, and the requestState secret stored beside them.
import { backendCipher, freshSecret, type Backend, type BackendOptions } from '../../tasks/backend.js';
import { getOrCreateMeta } from './database.js';
import { createSqliteTaskStore } from './task-store.js';

export interface SqliteBackendOptions extends BackendOptions {
  /** The database file (default `./data/tasks.db`; its folder is created). `:memory:` keeps nothing. */
  path?: string;
  /** How long a write waits for another process holding the file's lock (default 5 s). */
  busyTimeoutMs?: number;
}

export const DEFAULT_SQLITE_PATH = './data/tasks.db';

export function createSqliteBackend(options: SqliteBackendOptions = {}): Backend {
  const path = options.path ?? DEFAULT_SQLITE_PATH;
  const tasks = createSqliteTaskStore({
    path,
    busyTimeoutMs: options.busyTimeoutMs,
    cipher: backendCipher(options),
    encrypt: options.encrypt,
  });
  let stateSecret: string;
  try {
    stateSecret = options.stateSecret ?? getOrCreateMeta(tasks.db, 'request_state_secret', freshSecret);
  } catch (err) {
    void tasks.close();
    throw err;
  }
  return {
    tasks,
    sessions: tasks.sessions,
    stateSecret,
    description: `SQLite ${path}`,
    close: () => tasks.close(),
  };
}
