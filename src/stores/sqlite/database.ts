// Opens a SQLite file for several processes: WAL, busy timeout, durable sync, migrations under BEGIN IMMEDIATE.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { migrations } from './migrations/index.js';

export type SqliteDatabase = Database.Database;

export interface OpenSqliteOptions {
  path: string;
  /** PRAGMA synchronous; FULL (default) makes every commit durable. */
  synchronous?: 'FULL' | 'NORMAL' | 'EXTRA';
  busyTimeoutMs?: number;
}

export function openSqlite(options: OpenSqliteOptions): SqliteDatabase {
  if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
  const db = new Database(options.path);
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5_000))}`);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
  db.pragma('foreign_keys = ON');
  migrate(db);
  return db;
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

/** Reads a server-wide value, creating it once (first writer wins across processes). */
export function getOrCreateMeta(db: SqliteDatabase, key: string, create: () => string): string {
  db.prepare('INSERT OR IGNORE INTO server_meta (key, value) VALUES (?, ?)').run(key, create());
  const row = db.prepare('SELECT value FROM server_meta WHERE key = ?').get(key) as { value: string };
  return row.value;
}
