// Reads a store's migrations from its folder of numbered SQL files (`0001-name.sql` …), in order: the build copies
// the folders beside the compiled modules, so the same relative path serves dist/ and the sources.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** One numbered migration: its version and name (from the file's name) and its SQL text. */
export interface MigrationFile {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

const FILE_NAME = /^(\d{4})-([a-z0-9]+(?:-[a-z0-9]+)*)\.sql$/;

/**
 * The `.sql` files of `folder`, by version. Throws when there are none, when a name is not `NNNN-name.sql`, or when
 * the versions do not run 1, 2, 3 … without a gap or a repeat: a store must never apply a partial list.
 */
export function readMigrationFiles(folder: URL): MigrationFile[] {
  const where = fileURLToPath(folder);
  const files = readdirSync(folder).filter((file) => file.endsWith('.sql'));
  if (files.length === 0) throw new Error(`no migrations (*.sql) in ${where}`);
  const migrations = files
    .map((file) => {
      const [, number, name] = FILE_NAME.exec(file) ?? [];
      if (number === undefined || name === undefined)
        throw new Error(`migration ${file} in ${where}: expected a name like 0001-create-tasks.sql`);
      return { version: Number(number), name, sql: readFileSync(new URL(file, folder), 'utf8') };
    })
    .sort((a, b) => a.version - b.version || a.name.localeCompare(b.name));
  migrations.forEach((m, i) => {
    if (m.version === i + 1) return;
    const why = m.version === migrations[i - 1]?.version ? 'twice' : `where ${i + 1} was expected`;
    throw new Error(`migration ${m.version} (${m.name}) in ${where}: numbered ${why}`);
  });
  return migrations;
}
