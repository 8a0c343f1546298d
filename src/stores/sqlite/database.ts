// Opens a SQLite file for several processes: WAL, busy timeout, durable sync, migrations under BEGIN IMMEDIATE.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { sqliteDriver } from './driver.js';
import { migrations } from './migrations/index.js';
import { isBusy } from './write-retry.js';
import { SERVE_FLOOR_KEY } from '../schema-fit.js';
import { backoffCeilingMs } from '../../pacing/backoff.js';

export type SqliteDatabase = Database.Database;

export interface OpenSqliteOptions {
  path: string;
  /** PRAGMA synchronous; FULL (default) makes every commit durable. */
  synchronous?: 'FULL' | 'NORMAL' | 'EXTRA';
  /**
   * How long a write waits for another process's lock before failing with SQLITE_BUSY (default 5000 ms). The task
   * store waits asynchronously; the connection itself blocks for at most LOCK_WAIT_MS at a time.
   */
  busyTimeoutMs?: number;
}

/** The connection's own (blocking) busy timeout once open: short, so a locked file never stalls the event loop. */
export const LOCK_WAIT_MS = 25;

export function openSqlite(options: OpenSqliteOptions): SqliteDatabase {
  const Driver = sqliteDriver();
  if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
  const db = new Driver(options.path);
  const busyTimeoutMs = Math.max(0, Math.floor(options.busyTimeoutMs ?? 5_000));
  // Opening and migrating happen once, before serving: they may block for the whole busy timeout.
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
  db.pragma('foreign_keys = ON');
  // Statement journals (and other temporary files) in memory: a task's creation or ending touches more pages than
  // the 64 KiB a statement journal keeps in memory otherwise, and would open, write and delete a temporary file for
  // each. What one statement changes stays small: the sweeps work in chunks (sql/sweeps.ts).
  db.pragma('temp_store = MEMORY');
  try {
    // Processes opening a new file at once (a switch to WAL, its recovery) can be told "locked" without SQLite
    // waiting: both steps are idempotent, so they are tried again until the busy timeout has passed.
    retryWhileBusy(() => {
      db.pragma('journal_mode = WAL');
      migrate(db);
    }, busyTimeoutMs);
  } catch (err) {
    db.close();
    throw err;
  }
  db.pragma(`busy_timeout = ${Math.min(busyTimeoutMs, LOCK_WAIT_MS)}`);
  return db;
}

/** What a store's schema holds: the migrations applied, in order, and its serve floor (schema-fit.ts) if any. */
export interface SqliteSchemaState {
  applied: number[];
  floor?: string;
}

const hasTable = (db: SqliteDatabase, name: string): boolean =>
  db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(name) !== undefined;

/** The schema state of an open database (none applied before its first migration). */
export function sqliteSchemaState(db: SqliteDatabase): SqliteSchemaState {
  if (!hasTable(db, 'schema_migrations')) return { applied: [] };
  const applied = db
    .prepare('SELECT version FROM schema_migrations ORDER BY version')
    .pluck()
    .all() as number[];
  if (!hasTable(db, 'server_meta')) return { applied };
  return { applied, floor: readMeta(db, SERVE_FLOOR_KEY) };
}

/** The schema state of a file, read without changing it (none applied when there is no file yet). */
export function readSqliteSchemaState(path: string): SqliteSchemaState {
  if (path === ':memory:' || !existsSync(path)) return { applied: [] };
  const Driver = sqliteDriver();
  const db = new Driver(path, { readonly: true, fileMustExist: true });
  try {
    return sqliteSchemaState(db);
  } finally {
    db.close();
  }
}

/** The versions this release needs that the file has not applied (all of them for a new file). */
export function pendingSqliteMigrations(path: string): number[] {
  const done = new Set(readSqliteSchemaState(path).applied);
  return migrations.map((m) => m.version).filter((v) => !done.has(v));
}

/** The highest migration an open database has applied (0 before any). */
export function sqliteMigrationLevel(db: SqliteDatabase): number {
  const level = db.prepare('SELECT max(version) FROM schema_migrations').pluck().get();
  return typeof level === 'number' ? level : 0;
}

/** Runs `fn` again while it fails with SQLITE_BUSY, for up to `deadlineMs` (blocking: for start-up only). */
export function retryWhileBusy<T>(fn: () => T, deadlineMs: number, now: () => number = Date.now): T {
  const end = now() + deadlineMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let n = 0; ; n++) {
    try {
      return fn();
    } catch (err) {
      if (!isBusy(err) || now() >= end) throw err;
      Atomics.wait(pause, 0, 0, backoffCeilingMs(n, 5, 100));
    }
  }
}

function migrate(db: SqliteDatabase): void {
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
  );
  for (const m of migrations) {
    // BEGIN IMMEDIATE serialises concurrent starters; each re-checks inside the lock.
    const apply = db.transaction(() => {
      const done = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(m.version);
      if (done !== undefined) return;
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        m.version,
        m.name,
        new Date().toISOString(),
      );
    });
    apply.immediate();
  }
}

/**
 * Reads a server-wide value, creating it once (first writer wins across processes). At start-up, so it waits for
 * another process's lock (its migrations, say) up to `busyTimeoutMs`, not the connection's short serving timeout.
 */
export function getOrCreateMeta(
  db: SqliteDatabase,
  key: string,
  create: () => string,
  busyTimeoutMs = 5_000,
): string {
  // Read first: once the value exists, a start-up needs no write lock (another process may hold it).
  const existing = db.prepare('SELECT value FROM server_meta WHERE key = ?').get(key) as
    { value: string } | undefined;
  if (existing !== undefined) return existing.value;
  const value = create();
  retryWhileBusy(
    () => db.prepare('INSERT OR IGNORE INTO server_meta (key, value) VALUES (?, ?)').run(key, value),
    busyTimeoutMs,
  );
  const row = db.prepare('SELECT value FROM server_meta WHERE key = ?').get(key) as { value: string };
  return row.value;
}

/** A server-wide value, if stored. */
export function readMeta(db: SqliteDatabase, key: string): string | undefined {
  return (db.prepare('SELECT value FROM server_meta WHERE key = ?').get(key) as { value: string } | undefined)
    ?.value;
}

/** Forgets a server-wide value. */
export function deleteMeta(db: SqliteDatabase, key: string, busyTimeoutMs = 5_000): void {
  retryWhileBusy(() => db.prepare('DELETE FROM server_meta WHERE key = ?').run(key), busyTimeoutMs);
}
