// The store's own connection pool: timeouts on every statement and connection, READ COMMITTED whatever the
// server's default, and dropped connections that never crash the process.
import pg from 'pg';
import { POOL_APPLICATION_NAME } from './names.js';

export interface PostgresPoolOptions {
  /** `postgres://user:password@host:port/database`; without it (and without `pool`) the PG* environment is used. */
  connectionString?: string;
  /** Connections in the store's own pool (default 10). */
  poolSize?: number;
  /** Server-side statement_timeout of the store's own connections (default 30 s; 0 keeps the server's setting). */
  statementTimeoutMs?: number;
  /**
   * Client-side bound on a connection attempt and on the wait for a pooled connection (default 5 s). With the
   * statement timeout plus one second as the client-side bound on each statement (a server that stops answering
   * never sends its statement_timeout error), a request gets "Task store unavailable" in bounded time.
   */
  connectTimeoutMs?: number;
}

export function openPool(options: PostgresPoolOptions): pg.Pool {
  const statementTimeoutMs = options.statementTimeoutMs ?? 30_000;
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.poolSize ?? 10,
    statement_timeout: statementTimeoutMs,
    // The server's statement timeout answers first; this one covers a server (or network) that went silent.
    query_timeout: statementTimeoutMs > 0 ? statementTimeoutMs + 1_000 : undefined,
    // Claims and fenced writes are single statements that rely on READ COMMITTED re-checks, whatever the server's
    // default isolation is.
    options: '-c default_transaction_isolation=read\\ committed',
    application_name: POOL_APPLICATION_NAME,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    keepAlive: true,
  });
  // An idle connection that dies (server restart) is discarded by the pool; the next checkout reconnects.
  pool.on('error', () => undefined);
  // A checked-out client loses the pool's error listener: a dropped backend must not crash the process.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}
