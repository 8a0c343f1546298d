// Write transactions of the SQLite store: BEGIN IMMEDIATE, with a file locked by another process waited for
// asynchronously; lease writes may skip the fsync.
import type { ChangeLog, RecordedChange } from './change-log.js';
import type { OpenSqliteOptions, SqliteDatabase } from './database.js';
import { createWriteRetry } from './write-retry.js';

export interface Transactions {
  /** A write transaction whose recorded changes are logged inside it and emitted here after it commits. */
  tx<T>(fn: () => T): Promise<T>;
  /** A write transaction that records no changes. */
  immediate<T>(fn: () => T): Promise<T>;
  /**
   * A write transaction for lease writes (claim, renew), which may skip the fsync: a lease lost in a power cut is
   * simply claimed again, and the next durable commit flushes it anyway (so is a wait come due given its new place:
   * it is due again). Records changes as `tx` does.
   */
  leaseTx<T>(fn: () => T): Promise<T>;
  /** From now on writes fail with "store is closed" instead of touching the connection. */
  close(): void;
}

export function createTransactions(
  db: SqliteDatabase,
  options: Pick<OpenSqliteOptions, 'busyTimeoutMs' | 'synchronous'>,
  log: ChangeLog,
): Transactions {
  let closed = false;
  const retry = createWriteRetry({ deadlineMs: options.busyTimeoutMs, isClosed: () => closed });
  // One transaction wrapper for every write: db.transaction() builds five functions each time it is called.
  const inTransaction = db.transaction((fn: () => unknown) => fn());
  const immediate = <T>(fn: () => T): Promise<T> => retry(() => inTransaction.immediate(fn) as T);
  const synchronous = options.synchronous ?? 'FULL';
  const relaxed = synchronous !== 'NORMAL';
  // Prepared once: db.pragma() prepares its statement on every call, twice per lease write.
  const syncNormal = db.prepare('PRAGMA synchronous = NORMAL');
  const syncBack = db.prepare(`PRAGMA synchronous = ${synchronous}`);
  return {
    immediate,
    async tx<T>(fn: () => T): Promise<T> {
      let recorded: RecordedChange[] = [];
      const value = await immediate(() => {
        recorded = [];
        return log.capture(fn, recorded);
      });
      log.emit(recorded);
      return value;
    },
    async leaseTx<T>(fn: () => T): Promise<T> {
      let recorded: RecordedChange[] = [];
      const write = (): T => {
        recorded = [];
        return log.capture(fn, recorded);
      };
      const value = await (relaxed
        ? retry(() => {
            syncNormal.run();
            try {
              return inTransaction.immediate(write) as T;
            } finally {
              syncBack.run();
            }
          })
        : immediate(write));
      log.emit(recorded);
      return value;
    },
    close() {
      closed = true;
    },
  };
}
