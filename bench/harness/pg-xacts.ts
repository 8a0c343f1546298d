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

/** The next transaction id PostgreSQL will assign; undefined without PostgreSQL or when it cannot be read. */
export async function nextXid(): Promise<number | undefined> {
  if (url === undefined) return undefined;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PG_PROBE_TIMEOUT_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ next: string }>(
      'SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS next',
    );
    return Number(rows[0]!.next);
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}
