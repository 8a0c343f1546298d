// One READ COMMITTED transaction on one pooled connection; a connection left in doubt is destroyed, not reused.
import type pg from 'pg';
import { sqlState, translate } from './errors.js';
import type { Params, PreparedStatements } from './prepared-statements.js';

export type Row = Record<string, unknown>;

/** Runs one statement on the connection it was obtained from. */
export type Run = <R extends Row = Row>(sql: string, params?: Params) => Promise<R[]>;

/** `fn` inside BEGIN … COMMIT on one connection of `pool`; rolled back if it throws. */
export async function inTransaction<T>(
  pool: pg.Pool,
  statements: PreparedStatements,
  fn: (run: Run) => Promise<T>,
): Promise<T> {
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
      return (await client.query<R>(statements.statement(sql, params))).rows;
    } catch (err) {
      if (sqlState(err) === undefined) lost ??= err instanceof Error ? err : new Error(String(err));
      // Inside a transaction the failure stands (the transaction is aborted); the next attempt runs unnamed.
      statements.stale(err, sql);
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
}
