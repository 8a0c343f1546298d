// The catalog a store's migrations leave behind, as text: what the schema holds (tables, columns, indexes,
// constraints, triggers, functions) and the rows the migrations write, in a stable order with whitespace collapsed,
// so that two ways of applying the same migrations can be compared line by line.
import type pg from 'pg';
import type { SqliteDatabase } from '../../src/stores/sqlite/database.js';

/** Runs of whitespace as one space: the indentation of a statement's text is not part of its effect. */
const flat = (text: string | null | undefined): string => (text ?? '').replace(/\s+/g, ' ').trim();

const section = (title: string, lines: string[]): string => `## ${title}\n${lines.join('\n')}\n`;

/** A SQLite database's catalog: sqlite_schema, the user version, the migrations recorded and server_meta. */
export function sqliteCatalog(db: SqliteDatabase): string {
  type Entry = { type: string; name: string; tbl_name: string; sql: string | null };
  const entries = db
    .prepare('SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, tbl_name, name')
    .all() as Entry[];
  const migrations = db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all() as {
    version: number;
    name: string;
  }[];
  const meta = db.prepare('SELECT key, value FROM server_meta ORDER BY key').all() as {
    key: string;
    value: string;
  }[];
  return [
    section(
      'sqlite_schema',
      entries.map((e) => `${e.type} ${e.name} on ${e.tbl_name}: ${flat(e.sql)}`),
    ),
    section('user_version', [String(db.pragma('user_version', { simple: true }))]),
    section(
      'schema_migrations',
      migrations.map((m) => `${m.version} ${m.name}`),
    ),
    section(
      'server_meta',
      meta.map((m) => `${m.key} = ${m.value}`),
    ),
  ].join('\n');
}

/** A PostgreSQL schema's catalog, with the schema's name written `<schema>`. */
export async function postgresCatalog(pool: pg.Pool, schema: string): Promise<string> {
  const rows = async (sql: string): Promise<string[]> => {
    const result = await pool.query<{ line: string }>(sql, [schema]);
    return result.rows.map((r) => flat(r.line).split(schema).join('<schema>'));
  };
  const relations = await rows(`
    SELECT c.relkind::text || ' ' || c.relname AS line FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = $1 ORDER BY c.relname`);
  const columns = await rows(`
    SELECT table_name || '.' || column_name || ' #' || ordinal_position || ' ' || data_type
      || CASE WHEN is_nullable = 'NO' THEN ' NOT NULL' ELSE '' END
      || coalesce(' DEFAULT ' || column_default, '') AS line
    FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, ordinal_position`);
  const indexes = await rows(`
    SELECT tablename || ': ' || indexdef AS line FROM pg_indexes WHERE schemaname = $1
    ORDER BY tablename, indexname`);
  const constraints = await rows(`
    SELECT c.conrelid::regclass::text || ' ' || c.conname || ' (' || c.contype::text || '): '
      || pg_get_constraintdef(c.oid) AS line
    FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
    WHERE n.nspname = $1 ORDER BY c.conrelid::regclass::text, c.conname`);
  const functions = await rows(`
    SELECT pg_get_functiondef(p.oid) AS line FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = $1 ORDER BY p.proname, pg_get_function_identity_arguments(p.oid)`);
  const triggers = await rows(`
    SELECT pg_get_triggerdef(t.oid) AS line FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = $1 AND NOT t.tgisinternal ORDER BY c.relname, t.tgname`);
  const migrations = await rows(`
    SELECT version || ' ' || name AS line FROM ${quote(schema)}.schema_migrations WHERE $1::text IS NOT NULL
    ORDER BY version`);
  const meta = await rows(`
    SELECT key || ' = ' || value AS line FROM ${quote(schema)}.server_meta WHERE $1::text IS NOT NULL
    ORDER BY key`);
  return [
    section('relations', relations),
    section('columns', columns),
    section('indexes', indexes),
    section('constraints', constraints),
    section('functions', functions),
    section('triggers', triggers),
    section('schema_migrations', migrations),
    section('server_meta', meta),
  ].join('\n');
}

const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;
