// Where a canary could rest in the clear: the SQLite file and its WAL, or the files of a PostgreSQL schema's relations
// (tables, their TOAST tables and indexes) after a checkpoint. Each scan also looks for a marker that is stored in
// the clear on purpose (a tenant name), so that a scan that read the wrong files cannot pass.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pgQuery } from '../harness/postgres.js';

export interface ScanResult {
  files: number;
  bytes: number;
  /** Files holding the canary in the clear. */
  leaks: string[];
  /** Whether the clear marker was found (the scan read the store). */
  markerSeen: boolean;
}

function scanFiles(paths: string[], canary: string, marker: string): ScanResult {
  const result: ScanResult = { files: 0, bytes: 0, leaks: [], markerSeen: false };
  const needle = Buffer.from(canary);
  const clear = Buffer.from(marker);
  for (const path of paths) {
    if (!existsSync(path)) continue;
    const data = readFileSync(path);
    result.files += 1;
    result.bytes += data.length;
    if (data.includes(needle)) result.leaks.push(path);
    if (data.includes(clear)) result.markerSeen = true;
  }
  return result;
}

/** The SQLite file, its WAL and shared-memory file. */
export function scanSqlite(dbPath: string, canary: string, marker: string): ScanResult {
  const dir = dirname(dbPath);
  const name = basename(dbPath);
  const paths = readdirSync(dir)
    .filter((f) => f.startsWith(name))
    .map((f) => join(dir, f));
  return scanFiles(paths, canary, marker);
}

/**
 * The files of every relation of `schema` (after CHECKPOINT, so that committed rows are in them), every segment and
 * fork. Needs the database on this machine and read access to its data directory.
 */
export async function scanPostgres(
  url: string,
  schema: string,
  canary: string,
  marker: string,
): Promise<ScanResult | string> {
  await pgQuery(url, 'CHECKPOINT');
  const [dataDir] = await pgQuery<{ d: string }>(url, 'SELECT current_setting($1) AS d', ['data_directory']);
  const rels = await pgQuery<{ path: string | null }>(
    url,
    `SELECT pg_relation_filepath(c.oid) AS path FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1
     UNION
     SELECT pg_relation_filepath(c.reltoastrelid) FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.reltoastrelid <> 0`,
    [schema],
  );
  if (dataDir === undefined) return 'no data_directory';
  const paths: string[] = [];
  for (const { path } of rels) {
    if (path === null) continue;
    const full = join(dataDir.d, path);
    const dir = dirname(full);
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch (err) {
      return `cannot read ${dir}: ${(err as Error).message}`;
    }
    const base = basename(full);
    for (const f of entries)
      if (f === base || f.startsWith(`${base}.`) || f.startsWith(`${base}_`)) paths.push(join(dir, f));
  }
  return scanFiles(paths, canary, marker);
}
