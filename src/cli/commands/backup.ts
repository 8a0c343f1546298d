// `durable-mcp backup DEST`: a consistent copy of a SQLite store while servers keep using it (SQLite's online
// backup), checked and then moved into place. PostgreSQL stores are backed up with pg_dump (docs/operations.md).
import { chmodSync, existsSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { sqliteSchemaState } from '../../stores/sqlite/database.js';
import { sqliteDriver } from '../../stores/sqlite/driver.js';
import { parseFlags, UsageError } from '../args.js';
import { isPostgresUrl, storeFrom } from '../store-config.js';
import { printErr, printOut } from '../terminal-text.js';

export const backupUsage = `durable-mcp backup DEST [--store PATH]
  Copies a SQLite store (--store, or DURABLE_MCP_STORE / DURABLE_MCP_STORE_FILE) to the new file DEST while
  servers keep running on it: one consistent state, at the moment the copy ends. DEST must not exist; it is written
  beside itself first and moved into place once checked (mode 0600: it holds every task's payloads).
  To restore: stop the servers, then serve from the copy (or put it in the store's place, without the old file's
  -wal and -shm). Tasks running when the copy was taken resume after one --lease-ms.
  A PostgreSQL store is backed up with pg_dump instead (docs/operations.md, "Backup and restore").`;

/** How long the copy waits for a writer's lock at a time; the online backup itself never blocks writers for long. */
const BUSY_TIMEOUT_MS = 5_000;

/** The largest step better-sqlite3 takes: the whole file. */
const ALL_PAGES = 0x7fffffff;

export async function backup(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { store: { type: 'string' } }, true);
  const [dest, ...extra] = positionals;
  if (dest === undefined || extra.length > 0) throw new UsageError(`backup takes one DEST\n\n${backupUsage}`);
  const source = storeFrom(values.store);
  if (source === undefined)
    throw new UsageError('backup needs --store (or DURABLE_MCP_STORE, or DURABLE_MCP_STORE_FILE)');
  if (isPostgresUrl(source))
    throw new UsageError(
      'backup copies SQLite stores; back a PostgreSQL schema up with pg_dump (docs/operations.md)',
    );
  if (source === ':memory:' || !existsSync(source)) throw new UsageError(`no SQLite store at ${source}`);
  if (existsSync(dest)) throw new UsageError(`${dest} exists: backup writes a new file only`);
  const partial = join(dirname(dest), `.${basename(dest)}.partial`);
  try {
    const summary = await copy(source, partial);
    chmodSync(partial, 0o600);
    renameSync(partial, dest);
    printOut(`${source}: backed up to ${dest} (${summary})`);
    return 0;
  } catch (err) {
    rmSync(partial, { force: true });
    printErr(`backup: ${err instanceof Error ? err.message : String(err)}`);
    return 3;
  }
}

/** Copies `source` to `target` with SQLite's online backup, then checks the copy; says what it holds. */
async function copy(source: string, target: string): Promise<string> {
  // No migrations and no writes: the copy is of the store as it is, whichever release serves it.
  const Database = sqliteDriver();
  const db = new Database(source, { fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // All pages in one step, within one read transaction: in WAL mode writers go on meanwhile, and the copy never
    // starts over (a copy in small steps restarts whenever another process writes between two of them).
    await db.backup(target, { progress: () => ALL_PAGES });
  } finally {
    db.close();
  }
  const copied = new Database(target, { fileMustExist: true });
  try {
    const check = copied.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`the copy fails SQLite's quick_check: ${String(check)}`);
    const { applied } = sqliteSchemaState(copied);
    const tasks = applied.length === 0 ? 0 : copied.prepare('SELECT count(*) FROM tasks').pluck().get();
    return `${String(tasks)} tasks, migration ${Math.max(0, ...applied)}`;
  } finally {
    copied.close();
  }
}
