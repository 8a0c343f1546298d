// Server-wide values shared by every replica (e.g. the MRTR requestState secret), created once.
import type pg from 'pg';
import { migrate } from './migrations.js';
import { schemaNames } from './names.js';

export async function getOrCreateMeta(
  pool: pg.Pool,
  schema: string | undefined,
  key: string,
  create: () => string,
  migrateFirst = true,
): Promise<string> {
  if (migrateFirst) await migrate(pool, schema);
  const { quoted } = schemaNames(schema);
  await pool.query(
    `INSERT INTO ${quoted}.server_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`,
    [key, create()],
  );
  const { rows } = await pool.query<{ value: string }>(
    `SELECT value FROM ${quoted}.server_meta WHERE key = $1`,
    [key],
  );
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
  const { rows } = await pool.query<{ value: string }>(
    `SELECT value FROM ${quoted}.server_meta WHERE key = $1`,
    [key],
  );
  return rows[0]?.value;
}

/** Forgets a server-wide value. */
export async function deleteMeta(pool: pg.Pool, schema: string | undefined, key: string): Promise<void> {
  const { quoted } = schemaNames(schema);
  await pool.query(`DELETE FROM ${quoted}.server_meta WHERE key = $1`, [key]);
}
