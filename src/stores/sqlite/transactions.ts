// Write transactions of the SQLite store: BEGIN IMMEDIATE, with a file locked by another process waited for
// asynchronously; durable commits synced off the event loop (wal-sync.ts), lease writes not synced at all.
import type { ChangeLog, RecordedChange } from './change-log.js';
import type { OpenSqliteOptions, SqliteDatabase } from './database.js';
import { BACKSTOP_AUTOCHECKPOINT, createCheckpointer, type Checkpointer } from './checkpointer.js';
import { createWalSync, type WalSync } from './wal-sync.js';
import { createWriteRetry } from './write-retry.js';

export interface Transactions {
  /**
   * A write transaction whose recorded changes are logged inside it and emitted here once it is durable. Resolves
   * once it is durable.
   */
  tx<T>(fn: () => T): Promise<T>;
  /** A write transaction that records no changes; resolves once it is durable. */
  immediate<T>(fn: () => T): Promise<T>;
  /**
   * A write transaction for lease writes (claim, renew), which may skip the fsync: a lease lost in a power cut is
   * simply claimed again, and the next durable commit flushes it anyway (so is a wait come due given its new place:
   * it is due again). Records changes as `tx` does. Resolves, and emits, once every durable commit before it is
   * durable: a worker never runs a task whose creation a power cut could still undo.
   */
  leaseTx<T>(fn: () => T): Promise<T>;
  /**
   * While a WAL sync is in flight: keeps `fn` to run once it has ended, just before the next sync starts, and says
   * true; else false. A write committed while a sync is in flight waits for the next one anyway: committing it then,
   * with whatever else arrived meanwhile, costs one transaction instead of several and no later answer.
   */
  afterSync(fn: () => void): boolean;
  /**
   * Resolves once every durable commit made so far is durable; undefined when none waits. A read that answers a
   * task's owner awaits it, so that it never shows what a power cut could still undo.
   */
  settled(): Promise<void> | undefined;
  /** From now on writes fail with "store is closed" instead of touching the connection; waits for pending syncs. */
  close(): Promise<void>;
}

/**
 * The WAL file whose sync makes a commit durable, when commits are to be synced off the event loop: the configured
 * mode is FULL (the default) and the connection writes a WAL to a file. EXTRA keeps its sync on the connection (it
 * syncs more than the WAL); NORMAL is not synced per commit, as configured.
 */
function walToSync(db: SqliteDatabase, synchronous: OpenSqliteOptions['synchronous']): string | undefined {
  if ((synchronous ?? 'FULL') !== 'FULL') return undefined;
  if (db.pragma('journal_mode', { simple: true }) !== 'wal') return undefined;
  const main = (db.pragma('database_list') as { name: string; file: string }[]).find(
    (d) => d.name === 'main',
  );
  return main === undefined || main.file === '' ? undefined : `${main.file}-wal`;
}

/**
 * The WAL of `db` checkpointed by a thread of its own (checkpointer.ts), started with the first commit (a store opened
 * only to read, or for a moment, starts none); the connection's automatic checkpoint is only a backstop, back at its
 * own threshold if the thread fails and once the store closes.
 */
function checkpointsOffLoop(db: SqliteDatabase, walPath: string): Checkpointer {
  const own = db.pragma('wal_autocheckpoint', { simple: true }) as number;
  const restore = (): void => {
    if (db.open) db.pragma(`wal_autocheckpoint = ${own}`);
  };
  db.pragma(`wal_autocheckpoint = ${Math.max(own, BACKSTOP_AUTOCHECKPOINT)}`);
  let checkpointer: Checkpointer | undefined;
  let closed = false;
  const started = (): Checkpointer | undefined => {
    if (checkpointer === undefined && !closed)
      checkpointer = createCheckpointer(walPath.slice(0, -'-wal'.length), restore);
    return checkpointer;
  };
  return {
    committed: () => started()?.committed(),
    get failed() {
      return checkpointer?.failed ?? false;
    },
    // A connection the store does not own goes on with its own threshold.
    close: async () => {
      closed = true;
      await checkpointer?.close();
      restore();
    },
  };
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
  const synchronous = options.synchronous ?? 'FULL';
  const walPath = walToSync(db, synchronous);
  const wal: WalSync | undefined = walPath === undefined ? undefined : createWalSync(walPath);
  const checkpointer = walPath === undefined ? undefined : checkpointsOffLoop(db, walPath);
  // Prepared once: db.pragma() prepares its statement on every call. The connection stays at the configured mode
  // between transactions, so that a write made outside them (legacy sessions, server_meta) syncs on its own.
  const syncNormal = db.prepare('PRAGMA synchronous = NORMAL');
  const syncBack = db.prepare(`PRAGMA synchronous = ${synchronous}`);
  const atNormal = <T>(fn: () => T): T => {
    syncNormal.run();
    try {
      return inTransaction.immediate(fn) as T;
    } finally {
      syncBack.run();
    }
  };
  const relaxed = synchronous !== 'NORMAL';

  /**
   * Commits `fn`. Durable: resolves once the commit is (synced here, or by the connection itself without a WAL to
   * sync). Not durable (leases): committed without a sync, resolves once the durable commits before it are.
   */
  const commit = async <T>(fn: () => T, durable: boolean): Promise<T> => {
    if (wal === undefined)
      return retry(() => (durable || !relaxed ? (inTransaction.immediate(fn) as T) : atNormal(fn)));
    let synced: Promise<void> | undefined;
    const value = await retry(() => {
      if (wal.failure !== undefined) throw wal.failure;
      const v = atNormal(fn);
      // Taken in the same synchronous step as the commit: a sync started from now on covers it.
      synced = durable ? wal.committed() : wal.settled();
      checkpointer?.committed();
      return v;
    });
    await synced;
    return value;
  };

  const recording = async <T>(fn: () => T, durable: boolean): Promise<T> => {
    let recorded: RecordedChange[] = [];
    const value = await commit(() => {
      recorded = [];
      return log.capture(fn, recorded);
    }, durable);
    log.emit(recorded);
    return value;
  };

  return {
    immediate: (fn) => commit(fn, true),
    tx: (fn) => recording(fn, true),
    leaseTx: (fn) => recording(fn, false),
    afterSync: (fn) => wal?.afterSync(fn) ?? false,
    settled: () => wal?.settled(),
    async close() {
      closed = true;
      await wal?.close();
      await checkpointer?.close();
    },
  };
}
