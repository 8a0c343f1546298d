// Writing transactions PostgreSQL commits per operation of a pg row: the transaction ids it assigned over the run
// (read from a snapshot, which assigns none), divided by the row's operations. A transaction gets an id when it
// writes, and only such a commit waits for its WAL flush, so this is the commit rate the capacity model
// (docs/scaling.md) needs. It counts every writer of the cluster: other work on the same PostgreSQL adds to it.
import pg from 'pg';
import { PG_PROBE_TIMEOUT_MS } from '../config.js';

let url: string | undefined;

/** The PostgreSQL of the section's pg rows (undefined: none, the rows get no figure). */
export function usePgXacts(pgUrl: string | undefined): void {
  url = pgUrl;
}

/** A backend of PostgreSQL: its pid, its client's port (null: not a TCP client) and its type. */
export interface PgBackend {
  pid: number;
  port: number | null;
  type: string;
}

/** The port PostgreSQL listens on, from the section's URL (5432 when it names none). */
export function pgPort(): number {
  const port = url === undefined ? '' : new URL(url).port;
  return port === '' ? 5432 : Number(port);
}

/**
 * The next transaction id PostgreSQL will assign, and its backends (pg_stat_activity, which tells the row's own
 * backends, by their clients' ports, from other clients' for harness/cpu-window.ts); undefined without PostgreSQL
 * or when they cannot be read.
 */
export async function pgProbe(): Promise<{ next: number; backends: PgBackend[] } | undefined> {
  if (url === undefined) return undefined;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PG_PROBE_TIMEOUT_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ next: string; backends: PgBackend[] | null }>(
      `SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS next,
              (SELECT json_agg(json_build_object('pid', pid, 'port', client_port, 'type', backend_type))
                 FROM pg_stat_activity WHERE pid <> pg_backend_pid()) AS backends`,
    );
    return { next: Number(rows[0]!.next), backends: rows[0]!.backends ?? [] };
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}
