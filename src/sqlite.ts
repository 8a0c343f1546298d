/**
 * Public entry of `durable-mcp/sqlite`: the SQLite backend, one file on one host (the default store). It loads the
 * optional package `better-sqlite3` when a file is opened, not on import; where it is not installed, opening one
 * fails with an error naming it. Its types do not name the driver's, so type-checking it needs no
 * `@types/better-sqlite3`.
 *
 * @module durable-mcp/sqlite
 */
export { createSqliteBackend, DEFAULT_SQLITE_PATH } from './stores/sqlite/backend.js';
export type { SqliteBackendOptions } from './stores/sqlite/backend.js';
