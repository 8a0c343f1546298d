// The store's access to PostgreSQL: pooled statements and READ COMMITTED transactions, errors translated.
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
}

export function createDb({ pool, ownsPool, prepare }: DbOptions): Db {
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
    return (await pool.query<R>(sql, params as unknown[])).rows;
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
          return (await client.query<R>(sql, params as unknown[])).rows;
        } catch (err) {
          if (sqlState(err) === undefined) lost ??= err instanceof Error ? err : new Error(String(err));
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
