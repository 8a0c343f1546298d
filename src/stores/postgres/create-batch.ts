// Group commit for create(): creations queued in one turn of the event loop, or while earlier batches are
// inserting, are inserted by one statement.
import { performance } from 'node:perf_hooks';
import type { CreationBatches } from '../../tasks/store.js';
import type { NewTask, TaskSnapshot } from '../../tasks/task.js';
import { ActiveLimitError, IdempotencyConflictError } from '../../tasks/errors.js';
import { isDataError, translate } from './errors.js';

interface Pending<E> {
  task: NewTask;
  encoded?: E;
  resolve: (snapshot: TaskSnapshot) => void;
  reject: (err: unknown) => void;
}

export interface CreateBatcher {
  add(task: NewTask): Promise<TaskSnapshot>;
  /** Resolves once every queued and in-flight creation has settled. */
  drain(): Promise<void>;
  /** The batches ended so far (counts since the batcher was made). */
  batches(): CreationBatches;
}

/**
 * Batches inserting at once per store instance. A transaction that notifies commits under PostgreSQL's one lock on
 * the notification queue, held until its commit is flushed, so batches running side by side only queue for that
 * lock; the creations that arrive meanwhile wait here instead and leave as one larger batch. Two keep the database
 * busy: one batch executes its insert while the other commits.
 */
export const BATCHES_IN_FLIGHT = 2;

/** The most creations one statement inserts; more wait for the next batch. */
export const MAX_BATCH = 500;

/** Settles a creation the insert left out through `resolveMissing`. */
async function settleBy<E>(
  resolveMissing: (task: NewTask, encoded: E) => Promise<TaskSnapshot>,
  item: Pending<E>,
  encoded: E,
): Promise<void> {
  try {
    item.resolve(await resolveMissing(item.task, encoded));
  } catch (err) {
    // A conflict of idempotency keys is an answer about the task, not a failure of the database.
    // Answers about the task itself pass as they are; anything else is the store's.
    item.reject(
      err instanceof IdempotencyConflictError || err instanceof ActiveLimitError ? err : translate(err),
    );
  }
}

/** The creations whose tasks encode; each one that cannot is rejected on its own. */
function encodeEach<E>(batch: Pending<E>[], encode: (task: NewTask) => E): Encoded<E>[] {
  const ready: Encoded<E>[] = [];
  for (const item of batch) {
    try {
      ready.push({ ...item, encoded: encode(item.task) });
    } catch (err) {
      item.reject(err);
    }
  }
  return ready;
}

type Encoded<E> = Pending<E> & { encoded: E };

/**
 * `encode` turns a task into statement parameters (and may throw for that task alone); `insert` writes many in
 * one statement, throwing the driver's own error, and returns the snapshots of the tasks it inserted. The batch
 * insert answers the creations it left out (their idempotency key is held by another task), to be settled by
 * `settleMissing` once the batch's slot is free again. When a batch fails on its data (a duplicate id, a value the
 * database refuses), each creation is retried on its own so one bad row does not fail its neighbours; when it fails
 * for want of a database, all of them fail at once with StoreUnavailableError.
 */
function batchInsert<E>(
  encode: (task: NewTask) => E,
  insert: (tasks: E[]) => Promise<TaskSnapshot[]>,
  settleMissing: (item: Pending<E>, encoded: E) => Promise<void>,
): (batch: Pending<E>[]) => Promise<Encoded<E>[]> {
  const insertAlone = async (item: Pending<E>, encoded: E): Promise<void> => {
    let snapshot: TaskSnapshot | undefined;
    try {
      [snapshot] = await insert([encoded]);
    } catch (err) {
      item.reject(translate(err));
      return;
    }
    if (snapshot === undefined) await settleMissing(item, encoded);
    else item.resolve(snapshot);
  };

  return async (batch) => {
    const ready = encodeEach(batch, encode);
    if (ready.length === 0) return [];
    let snapshots: TaskSnapshot[];
    try {
      snapshots = await insert(ready.map((item) => item.encoded));
    } catch (err) {
      if (ready.length > 1 && isDataError(err)) {
        await Promise.all(ready.map((item) => insertAlone(item, item.encoded)));
      } else {
        const failure = translate(err);
        for (const item of ready) item.reject(failure);
      }
      return [];
    }
    const byId = new Map(snapshots.map((s) => [s.id, s]));
    const missing: Encoded<E>[] = [];
    for (const item of ready) {
      const snapshot = byId.get(item.task.id);
      if (snapshot !== undefined) item.resolve(snapshot);
      else missing.push(item);
    }
    return missing;
  };
}

/**
 * Group commit: creations queued while fewer than `maxInFlight` batches are inserting leave at the end of the turn
 * of the event loop, at most MAX_BATCH together; the others wait for a batch to end and then leave together. See
 * batchInsert for `encode` and `insert`; a creation left out because its idempotency key is held is settled by
 * `resolveMissing`.
 */
export function createBatcher<E>(
  encode: (task: NewTask) => E,
  insert: (tasks: E[]) => Promise<TaskSnapshot[]>,
  resolveMissing: (task: NewTask, encoded: E) => Promise<TaskSnapshot>,
  maxInFlight = BATCHES_IN_FLIGHT,
): CreateBatcher {
  const queue: Pending<E>[] = [];
  const inFlight = new Set<Promise<void>>();
  const settleMissing = (item: Pending<E>, encoded: E): Promise<void> =>
    settleBy(resolveMissing, item, encoded);
  const ended: CreationBatches = { batches: 0, tasks: 0, seconds: 0 };
  // Each insert counted as it ends, before its creations are answered.
  const counted = async (tasks: E[]): Promise<TaskSnapshot[]> => {
    const since = performance.now();
    try {
      return await insert(tasks);
    } finally {
      ended.batches += 1;
      ended.tasks += tasks.length;
      ended.seconds += (performance.now() - since) / 1000;
    }
  };
  const insertBatch = batchInsert(encode, counted, settleMissing);

  let inserting = 0;
  let scheduled = false;

  const start = (): void => {
    scheduled = false;
    if (queue.length === 0 || inserting >= maxInFlight) return;
    const batch = queue.splice(0, MAX_BATCH);
    inserting += 1;
    const done = insertBatch(batch).then(
      (missing) => {
        inserting -= 1;
        schedule();
        return Promise.all(missing.map((item) => settleMissing(item, item.encoded))).then(() => undefined);
      },
      () => {
        inserting -= 1;
        schedule();
      },
    );
    inFlight.add(done);
    void done.finally(() => inFlight.delete(done));
    schedule();
  };

  function schedule(): void {
    if (scheduled || queue.length === 0 || inserting >= maxInFlight) return;
    scheduled = true;
    setImmediate(start);
  }

  return {
    add(task) {
      return new Promise<TaskSnapshot>((resolve, reject) => {
        queue.push({ task, resolve, reject });
        schedule();
      });
    },
    async drain() {
      while (queue.length > 0 || inFlight.size > 0) {
        if (queue.length > 0 && inserting < maxInFlight) start();
        await Promise.all([...inFlight]);
      }
    },
    batches: () => ({ ...ended }),
  };
}
