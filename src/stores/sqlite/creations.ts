// create(): creations are group-committed. A task whose idempotency key names a live task of the owner joins it
// (same arguments) or conflicts with it; the key of an expired task goes to the new one (core/idempotency.ts).
import type { ActiveLimitError } from '../../tasks/errors.js';
import { DebounceConflictError, IdempotencyConflictError } from '../../tasks/errors.js';
import { debouncedMessage } from '../../tasks/debounce.js';
import type { NewTask, TaskSnapshot } from '../../tasks/task.js';
import { snapshotOf, type StoreContext } from './context.js';
import type { Lane, Settled } from './group-commit.js';
import { newSnapshot, type TaskRow } from './rows.js';
import { decideDebounce } from '../core/debounce.js';
import { decideKey, type KeyDecision } from '../core/idempotency.js';
import { creationOver } from '../core/quota.js';
import { encodeTask } from '../encode-task.js';
import { sealedAt, sealStatus } from '../payload-sealing.js';

/** How one creation went inside its transaction: inserted, or the live task its idempotency key names. */
type Created =
  | { kind: 'inserted' }
  | { kind: 'joined'; snapshot: TaskSnapshot }
  | { kind: 'conflict'; id: string; debounce?: true }
  | { kind: 'over'; error: ActiveLimitError };

/** What the task does with the key it names (free when it names none). */
function keyDecision({ q, codec }: StoreContext, task: NewTask): KeyDecision {
  if (task.idempotencyKey === undefined) return { kind: 'free' };
  return decideKey(
    q.keyed(task.owner, task.tool, task.idempotencyKey),
    task.args,
    task.createdAt,
    codec.open,
  );
}

/** The live task the decision names, joined or in conflict; undefined if none. */
function joined(ctx: StoreContext, task: NewTask, decision: KeyDecision): Created | undefined {
  if (decision.kind === 'conflict') return { kind: 'conflict', id: decision.id };
  if (decision.kind !== 'join') return undefined;
  const row = ctx.q.getOwned(decision.id, task.owner) as TaskRow;
  return { kind: 'joined', snapshot: snapshotOf(ctx, row) };
}

/**
 * A task with a debounce key (core/debounce.ts), inside the write transaction, which no other writer shares: the
 * live task its idempotency key names, if any, decides first; then the pending task holding its debounce key (joined,
 * given these arguments, or in conflict). Undefined: the task is to be inserted (the key, if held, was released).
 */
function debounced(ctx: StoreContext, task: NewTask, key: string): Created | undefined {
  const { q, codec, log } = ctx;
  const keyed = task.idempotencyKey === undefined ? undefined : keyDecision(ctx, task);
  if (keyed !== undefined) {
    const found = joined(ctx, task, keyed);
    if (found !== undefined) return found;
    if (keyed.kind === 'take-over') q.releaseKey(keyed.id);
  }
  const holder = q.debounceHolder(task.owner, task.tool, key);
  const decision = decideDebounce(holder, task, codec.open);
  if (decision.kind === 'free') return undefined;
  if (decision.kind === 'take-over') {
    q.releaseDebounce(decision.id);
    return undefined;
  }
  if (decision.kind === 'conflict') return { kind: 'conflict', id: decision.id, debounce: true };
  const { id } = decision;
  if (decision.kind === 'replace') {
    const sealed = codec.sealsTask(id);
    const message = debouncedMessage(Number(holder?.wake_at), true);
    const args = codec.sealFor(sealed, JSON.stringify(task.args), sealedAt('tasks.args', id));
    if (!q.replaceArgs(id, args, sealStatus(codec, sealed, id, message), task.createdAt))
      throw new Error(`task ${id} was pending and is not`);
    log.changed({ taskId: id, runnable: false, cancelRequested: false });
  }
  const row = q.getOwned(id, task.owner) as TaskRow;
  const snapshot = snapshotOf(ctx, row);
  return {
    kind: 'joined',
    snapshot: { ...snapshot, debounced: decision.kind === 'join' ? 'joined' : 'replaced' },
  };
}

/**
 * Inside a write transaction: inserts the task, unless its idempotency key names a live task of the owner (or its
 * debounce key a pending one). The insert itself finds an idempotency key in use (its unique index): a new key costs
 * no read.
 */
function insertOrJoin(ctx: StoreContext, task: NewTask): Created {
  const { q, codec } = ctx;
  const encoded = encodeTask(task, codec);
  if (encoded.debounceKey !== null) {
    const found = debounced(ctx, task, encoded.debounceKey);
    if (found !== undefined) return found;
  }
  // Inside the write transaction, which no other writer shares: the counts hold until the insert.
  const over = creationOver(encoded, {
    active: () => q.countActive(task.owner),
    stored: () => q.countStored(task.owner),
    'tenant-active': () => q.countTenantActive(task.owner.tenant),
    'tenant-stored': () => q.countTenantStored(task.owner.tenant),
    'stored-bytes': () => q.ownerBytes(task.owner),
  });
  if (over !== undefined) return joined(ctx, task, keyDecision(ctx, task)) ?? { kind: 'over', error: over };
  if (!q.insertTask(encoded)) {
    const decision = keyDecision(ctx, task);
    if (decision.kind === 'free') throw new Error(`task ${task.id} was not inserted`);
    if (decision.kind !== 'take-over') return joined(ctx, task, decision) as Created;
    q.releaseKey(decision.id);
    q.insertTask(encoded);
  }
  ctx.log.changed({ taskId: task.id, runnable: encoded.wakeAt === null, cancelRequested: false }, 'local');
  return { kind: 'inserted' };
}

function settledOf(task: NewTask, created: Created): Settled<TaskSnapshot> {
  if (created.kind === 'inserted') return { value: newSnapshot(task) };
  if (created.kind === 'joined') return { value: created.snapshot };
  if (created.kind === 'over') return { error: created.error };
  return {
    error: created.debounce
      ? new DebounceConflictError(created.id)
      : new IdempotencyConflictError(created.id),
  };
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
