// The SQLite driver, better-sqlite3, loaded when a SQLite file is first opened rather than when the package is
// imported: it is an optional dependency (a native addon), so that a PostgreSQL-only deployment runs without it.
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

export type SqliteDriver = typeof BetterSqlite3;

/** What opening a SQLite file for `what` says where the optional driver is not installed. */
export const sqliteDriverMissing = (what: string): string =>
  `${what} needs the optional package better-sqlite3 (npm install better-sqlite3@12)`;

let loaded: SqliteDriver | undefined;

/** better-sqlite3's constructor; throws an error naming the package, and `what` needed it, when it is not installed. */
export function sqliteDriver(what = 'the SQLite store'): SqliteDriver {
  if (loaded !== undefined) return loaded;
  // better-sqlite3 is CommonJS: require loads it synchronously, as the stores open their files.
  const require = createRequire(import.meta.url);
  try {
    loaded = require('better-sqlite3') as SqliteDriver;
  } catch (err) {
    if (!isMissing(err)) throw err;
    throw new Error(sqliteDriverMissing(what), { cause: err });
  }
  return loaded;
}

/** The package itself cannot be found (not one of its own imports, nor its native binding failing to load). */
function isMissing(err: unknown): boolean {
  if (!(err instanceof Error) || (err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') return false;
  return /['"]better-sqlite3['"]/.test(err.message);
}
