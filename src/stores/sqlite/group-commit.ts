// Group commit: writes queued in one turn of the event loop share one transaction, so one fsync covers them all;
// while a WAL sync is in flight, the writes queued meanwhile wait for it to end and then share one transaction.
import { StoreUnavailableError } from '../../tasks/errors.js';
import { isDataError, translate } from './write-retry.js';

/** What one queued write answers its caller: a value, or an error to reject with. */
export type Settled<R> = { value: R } | { error: unknown };

/** One kind of write that is group-committed (creations, run endings). */
export interface Lane<I, R> {
  /** Inside the transaction: writes every input, in order, and says what each caller is answered. */
  write(inputs: readonly I[]): Settled<R>[];
  /**
   * When a commit fails on its rows (not on the file): try each input again in a transaction of its own, so one
   * bad row does not sink its neighbours (true), or fail them all (false).
   */
  rowByRow: boolean;
}

export interface GroupCommit {
  /** Registers a kind of write; the function returned queues one. Lanes share transactions in registration order. */
  lane<I, R>(lane: Lane<I, R>): (input: I) => Promise<R>;
  /** Commits whatever is queued; writes queued afterwards are refused. */
  close(): Promise<void>;
}

interface Queued<I, R> {
  input: I;
  resolve: (value: R) => void;
  reject: (err: unknown) => void;
}

/** The queued writes of one lane, taken for one commit. */
interface Batch {
  readonly rowByRow: boolean;
  /** Inside the transaction (again on each attempt of it). */
  write(): void;
  /** After the commit: answers every caller. */
  settle(): void;
  fail(err: unknown): void;
  /** One batch per write, to be committed each on its own. */
  split(): Batch[];
}

function batchOf<I, R>(lane: Lane<I, R>, queued: Queued<I, R>[]): Batch {
  let settled: Settled<R>[] = [];
  return {
    rowByRow: lane.rowByRow,
    write: () => void (settled = lane.write(queued.map((q) => q.input))),
    settle: () =>
      queued.forEach(({ resolve, reject }, i) => {
        const s = settled[i] as Settled<R>;
        if ('error' in s) reject(s.error);
        else resolve(s.value);
      }),
    fail: (err) => queued.forEach(({ reject }) => reject(err)),
    split: () => queued.map((q) => batchOf(lane, [q])),
  };
}

/**
 * `tx` runs a write transaction (its changes recorded and emitted once durable). `afterSync`, if given, may hold a
 * flush back until the sync in flight has ended (Transactions.afterSync): it says whether it did.
 */
export function createGroupCommit(
  tx: (fn: () => void) => Promise<void>,
  afterSync: (fn: () => void) => boolean = () => false,
): GroupCommit {
  const takers: (() => Batch | undefined)[] = [];
  let scheduled = false;
  let closed = false;

  /** One batch alone; a failure on its rows is retried row by row (once) when its lane says so. */
  const commitAlone = async (batch: Batch, byRow = batch.rowByRow): Promise<void> => {
    try {
      await tx(() => batch.write());
    } catch (err) {
      if (byRow && isDataError(err)) {
        for (const one of batch.split()) await commitAlone(one, false);
      } else batch.fail(translate(err));
      return;
    }
    batch.settle();
  };

  // Every lane's writes in one transaction. If that fails on a row, each lane is committed on its own (the ones
  // failing as a whole first, the ones retried row by row after); if it fails on the file (locked past the
  // deadline, full, I/O), everything in it fails.
  const flush = async (): Promise<void> => {
    scheduled = false;
    const batches = takers.map((take) => take()).filter((b): b is Batch => b !== undefined);
    if (batches.length <= 1) {
      for (const batch of batches) await commitAlone(batch);
      return;
    }
    try {
      await tx(() => batches.forEach((batch) => batch.write()));
    } catch (err) {
      if (!isDataError(err)) {
        const reason = translate(err);
        for (const batch of batches) batch.fail(reason);
        return;
      }
      for (const batch of [...batches].sort((a, b) => Number(a.rowByRow) - Number(b.rowByRow)))
        await commitAlone(batch);
      return;
    }
    for (const batch of batches) batch.settle();
  };

  return {
    lane<I, R>(lane: Lane<I, R>) {
      let queue: Queued<I, R>[] = [];
      takers.push(() => {
        if (queue.length === 0) return undefined;
        const taken = queue;
        queue = [];
        return batchOf(lane, taken);
      });
      return (input: I) => {
        if (closed) return Promise.reject(new StoreUnavailableError('store is closed'));
        return new Promise<R>((resolve, reject) => {
          queue.push({ input, resolve, reject });
          if (scheduled) return;
          scheduled = true;
          setImmediate(() => {
            const run = (): void => void flush();
            if (!afterSync(run)) run();
          });
        });
      };
    },
    async close() {
      closed = true;
      await flush();
    },
  };
}
