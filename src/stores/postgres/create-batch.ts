// Group commit for create(): creations queued in one turn of the event loop are inserted by one statement.
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
}

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
function encodeEach<E>(batch: Pending<E>[], encode: (task: NewTask) => E): (Pending<E> & { encoded: E })[] {
  const ready: (Pending<E> & { encoded: E })[] = [];
  for (const item of batch) {
    try {
      ready.push({ ...item, encoded: encode(item.task) });
    } catch (err) {
      item.reject(err);
    }
  }
  return ready;
}

/**
 * `encode` turns a task into statement parameters (and may throw for that task alone); `insert` writes many in
 * one statement, throwing the driver's own error, and returns the snapshots of the tasks it inserted. A task it
 * left out (its idempotency key is held by another task) is settled by `resolveMissing`. When a batch fails on its
 * data (a duplicate id, a value the database refuses), each creation is retried on its own so one bad row does not
 * fail its neighbours; when it fails for want of a database, all of them fail at once with StoreUnavailableError.
 */
export function createBatcher<E>(
  encode: (task: NewTask) => E,
  insert: (tasks: E[]) => Promise<TaskSnapshot[]>,
  resolveMissing: (task: NewTask, encoded: E) => Promise<TaskSnapshot>,
): CreateBatcher {
  let queue: Pending<E>[] = [];
  const inFlight = new Set<Promise<void>>();

  const settleMissing = (item: Pending<E>, encoded: E): Promise<void> =>
    settleBy(resolveMissing, item, encoded);

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

  const flush = async (batch: Pending<E>[]): Promise<void> => {
    const ready = encodeEach(batch, encode);
    if (ready.length === 0) return;
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
      return;
    }
    const byId = new Map(snapshots.map((s) => [s.id, s]));
    const missing: Promise<void>[] = [];
    for (const item of ready) {
      const snapshot = byId.get(item.task.id);
      if (snapshot !== undefined) item.resolve(snapshot);
      else missing.push(settleMissing(item, item.encoded));
    }
    await Promise.all(missing);
  };

  const start = (): void => {
    const batch = queue;
    queue = [];
    const done = flush(batch);
    inFlight.add(done);
    void done.finally(() => inFlight.delete(done));
  };

  return {
    add(task) {
      return new Promise<TaskSnapshot>((resolve, reject) => {
        if (queue.length === 0) setImmediate(start);
        queue.push({ task, resolve, reject });
      });
    },
    async drain() {
      if (queue.length > 0) start();
      await Promise.all([...inFlight]);
    },
  };
}
