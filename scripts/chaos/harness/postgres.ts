// PostgreSQL for the PostgreSQL sections: one-shot queries, a reachability probe, throwaway schemas.
import pg from 'pg';
import type { Scope } from './scope.js';

export async function pgQuery<Row = Record<string, unknown>>(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as Row[];
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function pgReachable(url: string): Promise<boolean> {
  try {
    await pgQuery(url, 'SELECT 1');
    return true;
  } catch {
    return false;
  }
}

/** A fresh schema name for this run, registered for DROP … CASCADE when the scope closes. */
export function pgSchema(scope: Scope, url: string, label: string): string {
  const name = `chaos_${label}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`.slice(0, 50);
  scope.defer(async () => {
    await pgQuery(url, `DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(name)} CASCADE`);
  });
  return name;
}

/** A schema-qualified table name. */
export const pgTable = (schema: string, table: string): string => `${pg.escapeIdentifier(schema)}.${table}`;

/** Replaces host and port of a PostgreSQL URL (to send a server through the fault proxy). */
export function viaPort(url: string, port: number): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
}
