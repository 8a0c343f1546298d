// SQLite task stores on throwaway files for store tests: a fresh path per call, every store opened closed and every
// folder removed after each test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { TaskStore } from '../../src/tasks/store.js';
import { createSqliteTaskStore, type SqliteTaskStoreOptions } from '../../src/stores/sqlite/task-store.js';

type SqliteTaskStore = ReturnType<typeof createSqliteTaskStore>;

export interface SqliteFiles {
  /** A path in a new folder (removed after the test). */
  freshPath(): string;
  /** A store on `path` (closed after the test). */
  open(path: string, options?: Omit<SqliteTaskStoreOptions, 'path'>): SqliteTaskStore;
  /** Stores opened some other way, to close after the test. */
  readonly opened: TaskStore[];
}

/** Registers the cleanup (afterEach) of the files and stores it hands out. */
export function sqliteFiles(prefix = 'durable-mcp-sqlite-'): SqliteFiles {
  const dirs: string[] = [];
  const opened: TaskStore[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return {
    opened,
    freshPath() {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(dir);
      return join(dir, 'tasks.db');
    },
    open(path, options = {}) {
      const store = createSqliteTaskStore({ ...options, path });
      opened.push(store);
      return store;
    },
  };
}

/** Takes a file back past migration 24, operators' pauses (its indexes name columns of migrations 17 and 20). */
export const TAKE_BACK_PAUSES = `
  DROP INDEX tasks_paused_tool; DROP INDEX tasks_paused_key; ALTER TABLE tasks DROP COLUMN paused_at;
  DROP TABLE task_pauses; DELETE FROM schema_migrations WHERE version = 24;`;
