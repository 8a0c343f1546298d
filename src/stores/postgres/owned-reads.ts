// Owners' reads of one task (tasks/get) coalesced: the reads asked for while a few such statements are in flight, or
// in the same turn of the event loop, go to the database together as one statement (getOwnedMany), so that many
// clients polling at once cost a few round trips instead of one each.
import type { TaskOwner } from '../../tasks/task.js';
import type { Db } from './db.js';
import type { Queries } from './queries.js';
import type { PackedOwnedRow } from './rows.js';

export interface OwnedReadOptions {
  /** Most lookups in one statement (default 64). */
  maxBatch?: number;
  /** Most coalesced statements in flight at once; further reads wait for one to finish (default 2). */
  maxInFlight?: number;
}

/** The owner's row of task `id` (getOwned's), or undefined: no such task, or not this owner's. */
export type OwnedRead = (id: string, owner: TaskOwner) => Promise<PackedOwnedRow | undefined>;

interface Waiter {
  id: string;
  tenant: string;
  principal: string;
  resolve: (row: PackedOwnedRow | undefined) => void;
  reject: (err: unknown) => void;
}

type ManyRow = PackedOwnedRow & { n: number };

const DEFAULT_BATCH = 64;
const DEFAULT_IN_FLIGHT = 2;

/**
 * Every read is sent after it was asked for (never answered by a statement already under way), so a caller that
 * committed a change and then reads sees it. The owner test is the statement's, pair by pair, exactly getOwned's:
 * a task of another owner in the same statement is as absent as a missing one, and none of its columns is read.
 */
export function createOwnedReads(db: Db, q: Queries, options: OwnedReadOptions = {}): OwnedRead {
  const maxBatch = Math.max(1, options.maxBatch ?? DEFAULT_BATCH);
  const maxInFlight = Math.max(1, options.maxInFlight ?? DEFAULT_IN_FLIGHT);
  let queue: Waiter[] = [];
  let inFlight = 0;
  let scheduled = false;

  const run = async (batch: Waiter[]): Promise<void> => {
    inFlight++;
    try {
      if (batch.length === 1) {
        const w = batch[0]!;
        const [row] = await db.query<PackedOwnedRow>(q.getOwned, [w.id, w.tenant, w.principal]);
        w.resolve(row);
        return;
      }
      const rows = await db.query<ManyRow>(q.getOwnedMany, [
        batch.map((w) => w.id),
        batch.map((w) => w.tenant),
        batch.map((w) => w.principal),
      ]);
      const found: (ManyRow | undefined)[] = new Array(batch.length);
      for (const row of rows) found[row.n - 1] = row;
      for (let i = 0; i < batch.length; i++) batch[i]!.resolve(found[i]);
    } catch (err) {
      for (const w of batch) w.reject(err);
    } finally {
      inFlight--;
      flush();
    }
  };

  /** Sends what waits, in statements of up to maxBatch reads, as long as fewer than maxInFlight are under way. */
  function flush(): void {
    while (queue.length > 0 && inFlight < maxInFlight) {
      let batch: Waiter[];
      if (queue.length <= maxBatch) {
        batch = queue;
        queue = [];
      } else {
        batch = queue.slice(0, maxBatch);
        queue = queue.slice(maxBatch);
      }
      void run(batch);
    }
  }

  const flushScheduled = (): void => {
    scheduled = false;
    flush();
  };

  return (id, owner) =>
    new Promise((resolve, reject) => {
      queue.push({ id, tenant: owner.tenant, principal: owner.principal, resolve, reject });
      // Reads asked for in this turn of the event loop go together; while maxInFlight statements are under way, the
      // first of them to finish sends what has gathered.
      if (!scheduled && inFlight < maxInFlight) {
        scheduled = true;
        setImmediate(flushScheduled);
      }
    });
}
