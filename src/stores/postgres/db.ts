// The store's access to PostgreSQL: pooled statements and READ COMMITTED transactions, errors translated.
// Statements with parameters run as named prepared statements: each connection parses and plans one once, then
// only binds and executes it.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { StoreUnavailableError } from '../../tasks/errors.js';
import { sqlState, translate } from './errors.js';

export type Params = readonly unknown[];
export type Row = Record<string, unknown>;

/** Runs one statement on the connection it was obtained from. */
export type Run = <R extends Row = Row>(sql: string, params?: Params) => Promise<R[]>;

export interface Db {
  /** One statement in its own (implicit) transaction; driver errors are translated. */
  query: Run;
  /** Like `query`, but rethrows the driver's error untouched (callers that inspect the SQLSTATE). */
  queryRaw: Run;
  /** `fn` inside BEGIN … COMMIT on one pooled connection; rolled back if it throws. */
  tx<T>(fn: (run: Run) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface DbOptions {
  pool: pg.Pool;
  ownsPool: boolean;
  /** Awaited before the first statement (migrations); retried after a failure. */
  prepare?: () => Promise<void>;
  /** Named prepared statements (default true); off for poolers that do not keep them, such as PgBouncer < 1.21. */
  preparedStatements?: boolean;
}

/**
 * SQLSTATEs of a prepared statement that can no longer run as prepared: its result changed shape (another
 * process migrated the schema: "cached plan must not change result type"), or the server no longer has it (a
 * pooler between us and the server dropped it).
 */
const STALE_STATEMENT = new Set(['0A000', '26000']);

export function createDb({ pool, ownsPool, prepare, preparedStatements = true }: DbOptions): Db {
  // Statement text → its name; texts that failed as prepared statements run unnamed from then on.
  const names = new Map<string, string>();
  const unnamed = new Set<string>();
  const statement = (sql: string, params: Params): pg.QueryConfig => {
    const values = params as unknown[];
    if (!preparedStatements || params.length === 0 || unnamed.has(sql)) return { text: sql, values };
    let name = names.get(sql);
    if (name === undefined) {
      name = `dmcp_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
      names.set(sql, name);
    }
    return { name, text: sql, values };
  };
  /** Whether `err` says that the named statement of `sql` went stale (and stops naming it). */
  const stale = (err: unknown, sql: string): boolean => {
    const code = sqlState(err);
    if (code === undefined || !STALE_STATEMENT.has(code) || !names.has(sql) || unnamed.has(sql)) return false;
    if (code === '0A000' && !/cached plan/i.test((err as Error).message)) return false;
    unnamed.add(sql);
    return true;
  };
  let closed = false;
  let ready: Promise<void> | undefined;
  const ensureReady = async (): Promise<void> => {
    if (closed) throw new StoreUnavailableError('store is closed');
    if (prepare === undefined) return;
    ready ??= prepare().catch((err: unknown) => {
      ready = undefined; // the database may come back: try again on the next call
      throw translate(err);
    });
    await ready;
  };
  const queryRaw: Run = async <R extends Row>(sql: string, params: Params = []) => {
    await ensureReady();
    try {
      return (await pool.query<R>(statement(sql, params))).rows;
    } catch (err) {
      // Outside a transaction the statement can simply run again, unnamed.
      if (!stale(err, sql)) throw err;
      return (await pool.query<R>(statement(sql, params))).rows;
    }
  };

  return {
    queryRaw,
    async query<R extends Row>(sql: string, params: Params = []) {
      try {
        return await queryRaw<R>(sql, params);
      } catch (err) {
        throw translate(err);
      }
    },
    async tx(fn) {
      await ensureReady();
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        throw translate(err);
      }
      // A statement that failed without a server error (timeout, dropped connection) leaves the connection in an
      // unknown state: it is destroyed at once instead of waiting for a ROLLBACK that may never be answered.
      let lost: Error | undefined;
      const run: Run = async <R extends Row>(sql: string, params: Params = []) => {
        try {
          return (await client.query<R>(statement(sql, params))).rows;
        } catch (err) {
          if (sqlState(err) === undefined) lost ??= err instanceof Error ? err : new Error(String(err));
          // Inside a transaction the failure stands (the transaction is aborted); the next attempt runs unnamed.
          stale(err, sql);
          throw translate(err);
        }
      };
      try {
        await run('BEGIN ISOLATION LEVEL READ COMMITTED');
        const value = await fn(run);
        await run('COMMIT');
        client.release();
        return value;
      } catch (err) {
        if (lost !== undefined) {
          client.release(lost);
          throw err;
        }
        // A connection that cannot even roll back is broken: destroy it instead of returning it to the pool.
        const broken = await client.query('ROLLBACK').then(
          () => undefined,
          (e: unknown) => (e instanceof Error ? e : new Error('rollback failed')),
        );
        client.release(broken);
        throw err;
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      if (ownsPool) await pool.end().catch(() => undefined);
    },
  };
}
