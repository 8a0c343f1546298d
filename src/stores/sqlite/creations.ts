// create(): creations are group-committed. A task whose idempotency key names a live task of the owner joins it
// (same arguments) or conflicts with it; the key of an expired task goes to the new one.
import { ActiveLimitError, IdempotencyConflictError, type TaskQuota } from '../../tasks/errors.js';
import { sameJson } from '../../tasks/json-equal.js';
import type { JsonObject, NewTask, TaskSnapshot } from '../../tasks/task.js';
import { snapshotOf, type StoreContext } from './context.js';
import type { Lane, Settled } from './group-commit.js';
import { newSnapshot, type TaskRow } from './rows.js';
import { sealedAt } from '../payload-sealing.js';
import { encodeTask, type EncodedTask } from '../encode-task.js';
import { creationBytes, overStoredBytes } from '../stored-bytes.js';

/** How one creation went inside its transaction: inserted, or the live task its idempotency key names. */
type Created =
  | { kind: 'inserted' }
  | { kind: 'joined'; snapshot: TaskSnapshot }
  | { kind: 'conflict'; id: string }
  | { kind: 'over'; limit: number; quota: TaskQuota };

/** The live task of the owner that the task's idempotency key names, joined or in conflict; undefined if none. */
function joinKeyed(ctx: StoreContext, task: NewTask): Created | undefined {
  const { q, codec } = ctx;
  if (task.idempotencyKey === undefined) return undefined;
  const existing = q.keyed(task.owner, task.tool, task.idempotencyKey);
  if (existing === undefined || (existing.expires_at !== null && existing.expires_at <= task.createdAt))
    return undefined;
  const args = JSON.parse(codec.open(existing.args, sealedAt('tasks.args', existing.id))) as JsonObject;
  if (!sameJson(args, task.args)) return { kind: 'conflict', id: existing.id };
  const row = q.getOwned(existing.id, task.owner) as TaskRow;
  return { kind: 'joined', snapshot: snapshotOf(ctx, row) };
}

/** The first of the task's quotas that its owner (or tenant) has reached, if any. */
function overQuota({ q }: StoreContext, task: NewTask, encoded: EncodedTask): Created | undefined {
  const { owner, tenantLimits: tenant = {} } = task;
  const checks: [TaskQuota, number | undefined, () => number][] = [
    ['active', task.activeLimit, () => q.countActive(owner)],
    ['stored', task.storedLimit, () => q.countStored(owner)],
    ['tenant-active', tenant.active, () => q.countTenantActive(owner.tenant)],
    ['tenant-stored', tenant.stored, () => q.countTenantStored(owner.tenant)],
  ];
  for (const [quota, limit, count] of checks)
    if (limit !== undefined && count() >= limit) return { kind: 'over', limit, quota };
  if (task.storedBytesLimit === undefined) return undefined;
  const bytes = overStoredBytes(q.ownerBytes(owner), creationBytes(encoded), task.storedBytesLimit);
  return bytes === undefined ? undefined : { kind: 'over', limit: bytes.limit, quota: bytes.quota };
}

/**
 * Inside a write transaction: inserts the task, unless its idempotency key names a live task of the owner. The
 * insert itself finds a key in use (its unique index): a new key costs no read.
 */
function insertOrJoin(ctx: StoreContext, task: NewTask): Created {
  const { q, codec } = ctx;
  const encoded = encodeTask(task, codec);
  // Inside the write transaction, which no other writer shares: the counts hold until the insert.
  const over = overQuota(ctx, task, encoded);
  if (over !== undefined) return joinKeyed(ctx, task) ?? over;
  if (!q.insertTask(encoded)) {
    const key = task.idempotencyKey as string;
    const existing = q.keyed(task.owner, task.tool, key);
    if (existing === undefined) throw new Error(`task ${task.id} was not inserted`);
    if (existing.expires_at === null || existing.expires_at > task.createdAt) {
      const args = JSON.parse(codec.open(existing.args, sealedAt('tasks.args', existing.id))) as JsonObject;
      if (!sameJson(args, task.args)) return { kind: 'conflict', id: existing.id };
      const row = q.getOwned(existing.id, task.owner) as TaskRow;
      return { kind: 'joined', snapshot: snapshotOf(ctx, row) };
    }
    // The key's task has expired: the key is free for a new one.
    q.releaseKey(existing.id);
    q.insertTask(encoded);
  }
  ctx.log.changed({ taskId: task.id, runnable: true, cancelRequested: false }, 'local');
  return { kind: 'inserted' };
}

function settledOf(task: NewTask, created: Created): Settled<TaskSnapshot> {
  if (created.kind === 'inserted') return { value: newSnapshot(task) };
  if (created.kind === 'joined') return { value: created.snapshot };
  if (created.kind === 'over') return { error: new ActiveLimitError(created.limit, created.quota) };
  return { error: new IdempotencyConflictError(created.id) };
}

/** Creations, committed together; a row that cannot be stored is retried alone so it does not sink the others. */
export function creationLane(ctx: StoreContext): Lane<NewTask, TaskSnapshot> {
  return {
    rowByRow: true,
    write(tasks) {
      const created = tasks.map((task) => insertOrJoin(ctx, task));
      // Other processes only need to know that work arrived.
      if (created.some((c) => c.kind === 'inserted'))
        ctx.log.changed({ taskId: '*', runnable: true, cancelRequested: false }, 'log');
      return created.map((c, i) => settledOf(tasks[i] as NewTask, c));
    },
  };
}
