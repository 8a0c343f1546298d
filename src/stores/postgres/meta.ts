// Server-wide values shared by every replica (e.g. the MRTR requestState secret), created once.
import type pg from 'pg';
import { translate } from './errors.js';
import { migrate } from './migrations.js';
import { schemaNames } from './names.js';

/** One statement on the pool, its driver errors translated (they are read at open, where the reason is shown). */
async function run<R extends pg.QueryResultRow>(pool: pg.Pool, sql: string, params: unknown[]): Promise<R[]> {
  try {
    return (await pool.query<R>(sql, params)).rows;
  } catch (err) {
    throw translate(err);
  }
}

export async function getOrCreateMeta(
  pool: pg.Pool,
  schema: string | undefined,
  key: string,
  create: () => string,
  migrateFirst = true,
): Promise<string> {
  if (migrateFirst) await migrate(pool, schema);
  const { quoted } = schemaNames(schema);
  await run(
    pool,
    `INSERT INTO ${quoted}.server_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`,
    [key, create()],
  );
  const rows = await run<{ value: string }>(pool, `SELECT value FROM ${quoted}.server_meta WHERE key = $1`, [
    key,
  ]);
  const value = rows[0]?.value;
  if (value === undefined) throw new Error(`server_meta ${key} vanished`);
  return value;
}

/** A server-wide value, if stored. */
export async function readMeta(
  pool: pg.Pool,
  schema: string | undefined,
  key: string,
): Promise<string | undefined> {
  const { quoted } = schemaNames(schema);
  const rows = await run<{ value: string }>(pool, `SELECT value FROM ${quoted}.server_meta WHERE key = $1`, [
    key,
  ]);
  return rows[0]?.value;
}

/** Forgets a server-wide value. */
export async function deleteMeta(pool: pg.Pool, schema: string | undefined, key: string): Promise<void> {
  const { quoted } = schemaNames(schema);
  await run(pool, `DELETE FROM ${quoted}.server_meta WHERE key = $1`, [key]);
}
