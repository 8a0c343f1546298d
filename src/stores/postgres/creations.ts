// create(): creations of one turn of the event loop go in as one multi-row insert; a task whose idempotency key is
// held joins the key's task (same arguments), conflicts with it, or takes the key over once that task expired.
import type { ActiveLimitError } from '../../tasks/errors.js';
import { StoreUnavailableError } from '../../tasks/errors.js';
import type { NewTask, TaskOwner, TaskSnapshot } from '../../tasks/task.js';
import type { StoreContext } from './context.js';
import { createBatcher, type CreateBatcher } from './create-batch.js';
import { encodeTask, insertOf, type EncodedTask, type QuotaParams } from './encode.js';
import { sqlState, translate } from './errors.js';
import { DEBOUNCE_INDEX, KEY_INDEX } from './queries.js';
import { debouncedCreation } from './debounce.js';
import { toNumberOrNull, toSnapshot, type SnapshotColumns, type SnapshotRow, type TaskRow } from './rows.js';
import type { Run } from './transaction.js';
import { decideKey, joinedTask, type KeyHolder } from '../core/idempotency.js';
import { creationOver, ownerLimited, tenantLimited } from '../core/quota.js';
import { creationBytes, overStoredBytes } from '../stored-bytes.js';

/** What insertTasks returns of each task it inserted: its snapshot's columns and its sealed flag. */
type InsertedRow = SnapshotColumns & Pick<TaskRow, 'sealed'>;

/** A unique violation of the idempotency key index (or of the debounce key index: another replica's task won it). */
const isKeyTaken = (err: unknown): boolean => {
  const constraint = (err as { constraint?: unknown }).constraint;
  return sqlState(err) === '23505' && (constraint === KEY_INDEX || constraint === DEBOUNCE_INDEX);
};

/** The live task holding an idempotency key, as getOwned reads it, with its arguments (sealed). */
export type KeyedLookup = (owner: TaskOwner, tool: string, key: string) => Promise<SnapshotRow | undefined>;

export function keyedLookup({ db, q }: StoreContext): KeyedLookup {
  return async (owner, tool, key) => {
    const [row] = await db.query<SnapshotRow>(q.keyed, [owner.tenant, owner.principal, tool, key]);
    return row;
  };
}

const ownerOf = (t: EncodedTask): string => JSON.stringify([t.tenant, t.principal]);

const tenantOf = (t: EncodedTask): string => JSON.stringify([t.tenant]);

/** The key holder a lookup read, for the idempotency decision. */
export const holderOf = (row: SnapshotRow | undefined): KeyHolder | undefined =>
  row === undefined ? undefined : { id: row.id, expiresAt: toNumberOrNull(row.expires_at), args: row.args };

/** What an owner (or a tenant) holds inside the locked transaction: unfinished tasks, and tasks of any status. */
interface Held {
  active: number;
  stored: number;
}

/**
 * The quota the task would exceed given what its owner and its tenant hold, if any. The byte quota comes after, for
 * the tasks that fit: it takes no lock and counts no tasks, but reads the owner's count (a few rows), see byteQuota.
 */
const exceeded = (task: EncodedTask, owner: Held | undefined, tenant: Held | undefined) =>
  creationOver(task, {
    active: () => owner?.active,
    stored: () => owner?.stored,
    'tenant-active': () => tenant?.active,
    'tenant-stored': () => tenant?.stored,
  });

/** Admits the tasks of a batch that fit their owner's byte quota; `release` once the batch's insert has ended. */
type AdmitBytes = (
  run: Run,
  tasks: EncodedTask[],
  refused: WeakMap<EncodedTask, ActiveLimitError>,
) => Promise<{ admitted: EncodedTask[]; release: () => void }>;

/**
 * The byte quota's parameters of a batch's insert (sql/creation.ts), its tasks' bytes counted as added by this
 * instance until `release`.
 */
type ReserveBytes = (tasks: EncodedTask[]) => { params: QuotaParams; release: () => void };

/**
 * The byte quota at creation (NewTask.storedBytesLimit): a task fits when the bytes its owner stores (one read of
 * the count migration 17 keeps, for all of a batch's owners), what this instance's batches still in flight add,
 * and its own stay within the limit; the others go to `refused`. No lock and no count of tasks, so creation never
 * queues behind another batch: exact on one instance; instances creating for one principal at the same moment may
 * pass the limit by what their simultaneous batches add, and the next creation sees the total (docs/security.md).
 */
function byteQuota(q: StoreContext['q']): { admit: AdmitBytes; reserve: ReserveBytes } {
  const pending = new Map<string, number>();
  const hold = (added: Map<string, number>): (() => void) => {
    for (const [key, n] of added) pending.set(key, (pending.get(key) ?? 0) + n);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      for (const [key, n] of added) {
        const left = (pending.get(key) ?? 0) - n;
        if (left > 0) pending.set(key, left);
        else pending.delete(key);
      }
    };
  };
  const reserve: ReserveBytes = (tasks) => {
    const params: QuotaParams = { limits: [], adding: [], pending: [] };
    const added = new Map<string, number>();
    for (const task of tasks) {
      const limited = task.storedBytesLimit !== null;
      const key = limited ? ownerOf(task) : '';
      const adding = limited ? creationBytes(task) : null;
      params.limits.push(task.storedBytesLimit);
      params.adding.push(adding);
      params.pending.push(limited ? (pending.get(key) ?? 0) : null);
      if (adding !== null) added.set(key, (added.get(key) ?? 0) + adding);
    }
    return { params, release: hold(added) };
  };
  const admit: AdmitBytes = async (run, tasks, refused) => {
    const keys = [...new Set(tasks.filter((t) => t.storedBytesLimit !== null).map(ownerOf))];
    if (keys.length === 0) return { admitted: tasks, release: () => undefined };
    const owners = keys.map((key) => JSON.parse(key) as [string, string]);
    const rows = await run<{ tenant: string; principal: string; n: string }>(q.ownersBytes, [
      owners.map(([tenant]) => tenant),
      owners.map(([, principal]) => principal),
    ]);
    const held = new Map(rows.map((r) => [JSON.stringify([r.tenant, r.principal]), Number(r.n)]));
    const added = new Map<string, number>();
    const admitted = tasks.filter((task) => {
      if (task.storedBytesLimit === null) return true;
      const key = ownerOf(task);
      const adding = creationBytes(task);
      const now = (held.get(key) ?? 0) + (pending.get(key) ?? 0) + (added.get(key) ?? 0);
      const over = overStoredBytes(now, adding, task.storedBytesLimit);
      if (over !== undefined) {
        refused.set(task, over);
        return false;
      }
      added.set(key, (added.get(key) ?? 0) + adding);
      return true;
    });
    return { admitted, release: hold(added) };
  };
  return { admit, reserve };
}

/**
 * Inside one transaction: locks the tenants, then the owners, that have a limit (each in one order, so two batches
 * never wait on each other), counts their unfinished and kept tasks, and inserts what fits. Left out: tasks whose
 * key a live task holds (the batcher joins them) and tasks over one of their limits (kept in `refused`).
 */
async function insertCounted(
  { db, q }: StoreContext,
  tasks: EncodedTask[],
  refused: WeakMap<EncodedTask, ActiveLimitError>,
  admitBytes: (run: Run, fitting: EncodedTask[]) => Promise<EncodedTask[]>,
): Promise<InsertedRow[]> {
  return db.tx(async (run) => {
    const count = async (sql: string, params: string[]): Promise<number> =>
      Number((await run<{ n: number }>(sql, params))[0]?.n ?? 0);
    const tenants = new Map<string, Held>();
    for (const key of [...new Set(tasks.filter(tenantLimited).map(tenantOf))].sort()) {
      await run(q.lockOwner, [key]);
      const [tenant] = JSON.parse(key) as [string];
      tenants.set(key, {
        active: await count(q.countTenantActive, [tenant]),
        stored: await count(q.countTenantStored, [tenant]),
      });
    }
    const owners = new Map<string, Held>();
    for (const key of [...new Set(tasks.filter(ownerLimited).map(ownerOf))].sort()) {
      await run(q.lockOwner, [key]);
      const [tenant, principal] = JSON.parse(key) as [string, string];
      owners.set(key, {
        active: await count(q.countActive, [tenant, principal]),
        stored: await count(q.countStored, [tenant, principal]),
      });
    }
    const fitting: EncodedTask[] = [];
    for (const task of tasks) {
      if (task.idempotencyKey !== null) {
        const [taken] = await run<SnapshotRow>(q.keyed, [
          task.tenant,
          task.principal,
          task.tool,
          task.idempotencyKey,
        ]);
        if (taken !== undefined) continue;
      }
      const owner = owners.get(ownerOf(task));
      const tenant = tenants.get(tenantOf(task));
      const over = exceeded(task, owner, tenant);
      if (over !== undefined) {
        refused.set(task, over);
        continue;
      }
      for (const held of [owner, tenant]) {
        if (held === undefined) continue;
        held.active += 1;
        held.stored += 1;
      }
      fitting.push(task);
    }
    const inserting = await admitBytes(run, fitting);
    return inserting.length === 0 ? [] : run<InsertedRow>(...insertOf(q, inserting));
  });
}

export function createTaskCreation(ctx: StoreContext, keyed: KeyedLookup): CreateBatcher {
  const { db, q, codec, feed } = ctx;
  const refused = new WeakMap<EncodedTask, ActiveLimitError>();
  const { admit, reserve } = byteQuota(q);
  const insert = async (tasks: EncodedTask[]): Promise<TaskSnapshot[]> => {
    let rows: InsertedRow[];
    const releases: (() => void)[] = [];
    const admitBytes = async (run: Run, fitting: EncodedTask[]): Promise<EncodedTask[]> => {
      const { admitted, release } = await admit(run, fitting, refused);
      releases.push(release);
      return admitted;
    };
    try {
      if (tasks.some((t) => ownerLimited(t) || tenantLimited(t)))
        rows = await insertCounted(ctx, tasks, refused, admitBytes);
      else {
        // The quota checked by the insert itself: all of the batch fits, or none of it was inserted.
        const quota = reserve(tasks);
        releases.push(quota.release);
        rows = await db.queryRaw<InsertedRow>(...insertOf(q, tasks, quota.params));
        if (rows.length === 0) {
          quota.release();
          const inserting = await admitBytes(db.queryRaw, tasks);
          if (inserting.length > 0) rows = await db.queryRaw<InsertedRow>(...insertOf(q, inserting));
        }
      }
    } catch (err) {
      // One task alone whose key is taken: not inserted (the batcher resolves it); in a batch, the batcher splits it.
      if (tasks.length === 1 && isKeyTaken(err)) return [];
      throw err;
    } finally {
      for (const release of releases) release();
    }
    feed.emitLocal(rows.map((r) => ({ taskId: r.id, runnable: true, cancelRequested: false })));
    return rows.map((row) => {
      codec.remember(row.id, row.sealed);
      return toSnapshot(row, codec.open);
    });
  };
  /**
   * A task the insert left out because its idempotency key is held: the holder (same arguments), a conflict, or,
   * when the holder has expired, the key freed and the task inserted after all. Each turn of the loop either ends
   * or saw another writer move the key; a few turns settle any race.
   */
  const joinByKey = async (task: NewTask, encoded: EncodedTask): Promise<TaskSnapshot> => {
    // Over its owner's limit: it still joins the live task its key names, if any (a retried call is no new task).
    const over = refused.get(encoded);
    refused.delete(encoded);
    const key = task.idempotencyKey;
    if (key === undefined) throw over ?? new Error(`task ${task.id} was not inserted`);
    for (let turn = 0; turn < 5; turn++) {
      const row = await keyed(task.owner, task.tool, key);
      const decision = decideKey(holderOf(row), task.args, task.createdAt, codec.open);
      const live = await joinedTask(decision, () => row && toSnapshot(row, codec.open));
      if (live !== undefined) return live;
      if (over !== undefined) throw over;
      if (decision.kind === 'take-over') await db.query(q.releaseKey, [decision.id, task.createdAt]);
      const [inserted] = await insert([encoded]).catch((err: unknown) => {
        throw translate(err);
      });
      if (inserted !== undefined) return inserted;
    }
    throw new StoreUnavailableError(`idempotency key of task ${task.id} kept changing hands`);
  };
  const batcher = createBatcher<EncodedTask>((task: NewTask) => encodeTask(task, codec), insert, joinByKey);
  return withDebounce(batcher, debouncedOf(ctx, keyed, insert, refused));
}

/** create() for tasks with a debounce key (debounce.ts), inserting through the batcher's `insert` (quotas included). */
function debouncedOf(
  ctx: StoreContext,
  keyed: KeyedLookup,
  insert: (tasks: EncodedTask[]) => Promise<TaskSnapshot[]>,
  refused: WeakMap<EncodedTask, ActiveLimitError>,
): (task: NewTask) => Promise<TaskSnapshot> {
  const { db, q, codec } = ctx;
  const byIdempotencyKey = async (task: NewTask): Promise<TaskSnapshot | undefined> => {
    if (task.idempotencyKey === undefined) return undefined;
    const row = await keyed(task.owner, task.tool, task.idempotencyKey);
    const decision = decideKey(holderOf(row), task.args, task.createdAt, codec.open);
    const live = await joinedTask(decision, () => row && toSnapshot(row, codec.open));
    if (decision.kind === 'take-over') await db.query(q.releaseKey, [decision.id, task.createdAt]);
    return live;
  };
  return debouncedCreation(ctx, byIdempotencyKey, async (encoded) => {
    const [inserted] = await insert([encoded]).catch((err: unknown) => {
      throw translate(err);
    });
    const over = refused.get(encoded);
    refused.delete(encoded);
    if (over !== undefined) throw over;
    return inserted;
  });
}

/** The batcher, with tasks that carry a debounce key created by `debounced` instead (and drained with it). */
function withDebounce(
  batcher: CreateBatcher,
  debounced: (task: NewTask) => Promise<TaskSnapshot>,
): CreateBatcher {
  const inFlight = new Set<Promise<unknown>>();
  return {
    add(task) {
      if (task.debounce === undefined) return batcher.add(task);
      const created = debounced(task);
      inFlight.add(created);
      const forget = (): void => void inFlight.delete(created);
      created.then(forget, forget);
      return created;
    },
    async drain() {
      await batcher.drain();
      await Promise.allSettled([...inFlight]);
    },
    batches: () => batcher.batches(),
  };
}
