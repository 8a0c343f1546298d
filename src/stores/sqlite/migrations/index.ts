// Numbered schema migrations for the SQLite store: the `NNNN-name.sql` files of this folder, applied in order inside
// one transaction each (../database.ts). A new migration keeps older releases working on the schema (nullable
// columns, new tables and indexes), or else records its version under `serve_min_migration` in server_meta in its
// own SQL, so older releases refuse to serve the store (a rollback) rather than misread it: see ../../schema-fit.ts.
import { readMigrationFiles, type MigrationFile } from '../../migration-files.js';

/** One numbered schema migration of the SQLite store. */
export type Migration = MigrationFile;

export const migrations: readonly Migration[] = readMigrationFiles(new URL('./', import.meta.url));
