// Reading a folder of numbered migrations: numeric order, and a folder that is not 1, 2, 3 … refused whole.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { readMigrationFiles } from './migration-files.js';

const folders: string[] = [];
afterEach(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A folder holding these files (name → text), as a URL ending in a slash. */
function folderOf(files: Record<string, string>): URL {
  const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
  folders.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return pathToFileURL(`${dir}/`);
}

describe('readMigrationFiles', () => {
  it('reads the .sql files in numeric order, with the version and name their names give', () => {
    const files: Record<string, string> = { 'README.md': 'not a migration' };
    for (let v = 1; v <= 11; v += 1)
      files[`${String(v).padStart(4, '0')}-step-${v}.sql`] = `-- ${v}\nSELECT ${v};\n`;
    const read = readMigrationFiles(folderOf(files));
    expect(read.map((m) => [m.version, m.name])).toEqual(
      Array.from({ length: 11 }, (_, i) => [i + 1, `step-${i + 1}`]),
    );
    expect(read[9]?.sql).toBe('-- 10\nSELECT 10;\n');
  });

  it('refuses a gap, a repeated number, a badly named file and an empty folder', () => {
    expect(() => readMigrationFiles(folderOf({ '0001-a.sql': '', '0003-c.sql': '' }))).toThrow(
      /migration 3 \(c\) in .*: numbered where 2 was expected/,
    );
    expect(() =>
      readMigrationFiles(folderOf({ '0001-a.sql': '', '0002-b.sql': '', '0002-c.sql': '' })),
    ).toThrow(/migration 2 \(c\) in .*: numbered twice/);
    expect(() => readMigrationFiles(folderOf({ '0001-a.sql': '', '2-b.sql': '' }))).toThrow(
      /migration 2-b\.sql in .*: expected a name like 0001-create-tasks\.sql/,
    );
    expect(() => readMigrationFiles(folderOf({ '0002-b.sql': '' }))).toThrow(/where 1 was expected/);
    expect(() => readMigrationFiles(folderOf({}))).toThrow(/no migrations \(\*\.sql\) in /);
  });
});
