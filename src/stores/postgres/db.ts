// The store's access to PostgreSQL: pooled statements and READ COMMITTED transactions, errors translated.
import type pg from 'pg';
import { StoreUnavailableError } from '../../tasks/errors.js';
import { translate } from './errors.js';
import { createPreparedStatements, type Params } from './prepared-statements.js';
import { inTransaction, type Row, type Run } from './transaction.js';

export type { Params } from './prepared-statements.js';
export type { Row, Run } from './transaction.js';

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

export function createDb({ pool, ownsPool, prepare, preparedStatements = true }: DbOptions): Db {
  const statements = createPreparedStatements(preparedStatements);
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
      return (await pool.query<R>(statements.statement(sql, params))).rows;
    } catch (err) {
      // Outside a transaction the statement can simply run again, unnamed.
      if (!statements.stale(err, sql)) throw err;
      return (await pool.query<R>(statements.statement(sql, params))).rows;
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
      return inTransaction(pool, statements, fn);
    },
    async close() {
      if (closed) return;
      closed = true;
      if (ownsPool) await pool.end().catch(() => undefined);
    },
  };
}
