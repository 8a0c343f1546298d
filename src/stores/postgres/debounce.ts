// create() of a task with a debounce key (NewTask.debounce, ../core/debounce.ts): decided against the task holding
// the key, read with plain statements. tasks_debounce keeps one holder per key across replicas: a creation that
// loses a race to insert finds the winner on its next turn. A replacement is one conditional UPDATE, atomic with a
// claim of the same row (the one that locks it first wins; the other re-reads it).
import { DebounceConflictError, StoreUnavailableError } from '../../tasks/errors.js';
import { debouncedMessage } from '../../tasks/debounce.js';
import type { NewTask, TaskSnapshot } from '../../tasks/task.js';
import { decideDebounce, type DebounceHolder } from '../core/debounce.js';
import { sealedAt, statusFor } from '../payload-sealing.js';
import { withCommitted, type StoreContext } from './context.js';
import { encodeTask, type EncodedTask } from './encode.js';
import { toSnapshot, type SnapshotRow } from './rows.js';

/** Inserts one task: its snapshot, or undefined when a key it names was taken meanwhile (the error of a quota: thrown). */
export type InsertOne = (task: EncodedTask) => Promise<TaskSnapshot | undefined>;

/** The live task the task's idempotency key names, if any (a conflict is thrown; an expired holder's key released). */
export type ByIdempotencyKey = (task: NewTask) => Promise<TaskSnapshot | undefined>;

type HolderRow = SnapshotRow & DebounceHolder;

/** Gives the pending holder the task's arguments: its snapshot after, or undefined when it is no longer pending. */
async function replaceArgs(
  { db, q, codec, feed }: StoreContext,
  holder: HolderRow,
  key: string,
  task: NewTask,
): Promise<TaskSnapshot | undefined> {
  const { id } = holder;
  const seal = await codec.sealerOf(id);
  const args = seal(JSON.stringify(task.args), sealedAt('tasks.args', id));
  const message = statusFor(seal, id, debouncedMessage(Number(holder.wake_at), true));
  const [row] = await db.query<SnapshotRow>(q.replaceArgs, [id, key, args, message, task.createdAt]);
  if (row === undefined) return undefined;
  feed.emitLocal([withCommitted({ taskId: id, runnable: false, cancelRequested: false }, row, codec.open)]);
  return { ...toSnapshot(row, codec.open), debounced: 'replaced' };
}

/**
 * One turn: the answer for the task from the key's holder (joined, replaced, or a conflict thrown), 'insert' when the
 * key is free (an ended holder's key released), 'again' when the holder started while it was being replaced.
 */
async function decide(
  ctx: StoreContext,
  task: NewTask,
  key: string,
): Promise<TaskSnapshot | 'insert' | 'again'> {
  const { db, q, codec } = ctx;
  const params = [task.owner.tenant, task.owner.principal, task.tool, key];
  const [holder] = await db.query<HolderRow>(q.debounceHolder, params);
  const decision = decideDebounce(holder, task, codec.open);
  switch (decision.kind) {
    case 'free':
      return 'insert';
    case 'take-over':
      await db.query(q.releaseDebounce, [decision.id, key]);
      return 'insert';
    case 'conflict':
      throw new DebounceConflictError(decision.id);
    case 'join':
      return { ...toSnapshot(holder as HolderRow, codec.open), debounced: 'joined' };
    case 'replace':
      return (await replaceArgs(ctx, holder as HolderRow, key, task)) ?? 'again';
  }
}

/** create() for tasks with a debounce key; `insert` writes one as the batcher's statements do (quotas included). */
export function debouncedCreation(
  ctx: StoreContext,
  byIdempotencyKey: ByIdempotencyKey,
  insert: InsertOne,
): (task: NewTask) => Promise<TaskSnapshot> {
  return async (task) => {
    const encoded = encodeTask(task, ctx.codec);
    const key = encoded.debounceKey as string;
    // Each turn ends, or saw another writer take or move a key: a few turns settle any race.
    for (let turn = 0; turn < 5; turn++) {
      const earlier = await byIdempotencyKey(task);
      if (earlier !== undefined) return earlier;
      const decided = await decide(ctx, task, key);
      if (decided === 'again') continue;
      if (decided !== 'insert') return decided;
      const inserted = await insert(encoded);
      if (inserted !== undefined) return inserted;
    }
    throw new StoreUnavailableError(`debounce key of task ${task.id} kept changing hands`);
  };
}
