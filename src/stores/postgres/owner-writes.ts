// The owner's writes (answer, cancel): one READ COMMITTED transaction each, holding the task's row lock from the
// first read to the commit, so a concurrent completion, cancel or answer waits and then re-checks its condition.
import type { AnswerResult, CancelResult, TaskChange } from '../../tasks/store.js';
import { cancelChildren, parentChange, type ParentWoken } from './children.js';
import { RESUMED_STATUS_MESSAGE, type JsonObject, type TaskOwner } from '../../tasks/task.js';
import { withCommitted, type StoreContext } from './context.js';
import { missOf } from '../core/rows.js';
import { toNumber, type SnapshotColumns } from './rows.js';
import { sealedAt } from '../payload-sealing.js';

interface LockedRow {
  [column: string]: unknown;
  status: string;
  expires_at: string | number | null;
  lease_owner: string | null;
  lease_until: string | number | null;
  sealed: boolean;
}

export async function answerInputs(
  { db, q, codec, feed }: StoreContext,
  id: string,
  owner: TaskOwner,
  responses: Record<string, JsonObject>,
  now: number,
): Promise<AnswerResult> {
  const keys = Object.keys(responses);
  let changed = false;
  let touched: SnapshotColumns | undefined;
  const result = await db.tx(async (run): Promise<AnswerResult> => {
    const [row] = await run<LockedRow>(q.lockOwned, [id, owner.tenant, owner.principal]);
    const miss = missOf(row, now);
    if (miss !== undefined || row === undefined) return { ok: false, miss: miss ?? 'not_found' };
    if (row.status !== 'input_required' || keys.length === 0) return { ok: true, resumed: false };
    // Unknown, answered, superseded and creation-time keys match no open row and are ignored.
    const answers = keys.map((k) =>
      codec.sealFor(row.sealed, JSON.stringify(responses[k]), sealedAt('task_inputs.answer', id, k)),
    );
    const [counts] = await run<{ answered: number; open_before: number }>(q.answerInputs, [
      id,
      now,
      keys,
      answers,
    ]);
    if (counts === undefined || counts.answered === 0) return { ok: true, resumed: false };
    const resumed = counts.open_before === counts.answered;
    [touched] = await run<SnapshotColumns>(q.touchAfterAnswer, [id, now, resumed, RESUMED_STATUS_MESSAGE]);
    changed = true;
    return { ok: true, resumed };
  });
  if (changed && result.ok) {
    const change = { taskId: id, runnable: result.resumed, cancelRequested: false };
    feed.emitLocal([withCommitted(change, touched, codec.open)]);
  }
  return result;
}

export async function requestCancel(
  ctx: StoreContext,
  id: string,
  owner: TaskOwner,
  now: number,
): Promise<CancelResult> {
  const { db, q, feed, codec } = ctx;
  let changed = false;
  let cancelled: (SnapshotColumns & ParentWoken) | undefined;
  let others: TaskChange[] = [];
  const result = await db.tx(async (run): Promise<CancelResult> => {
    const [row] = await run<LockedRow>(q.lockOwned, [id, owner.tenant, owner.principal]);
    const miss = missOf(row, now);
    if (miss !== undefined || row === undefined) return { ok: false, miss: miss ?? 'not_found' };
    if (row.status !== 'working' && row.status !== 'input_required') {
      return { ok: true, cancelledNow: false, running: false };
    }
    changed = true;
    others = await cancelChildren(ctx, run, id, now);
    // A live lease means a worker is running it: flag the run, which stops at its next heartbeat.
    if (row.lease_owner !== null && toNumber(row.lease_until ?? 0) > now) {
      await run(q.flagCancel, [id]);
      return { ok: true, cancelledNow: false, running: true };
    }
    [cancelled] = await run<SnapshotColumns & ParentWoken>(q.cancelNow, [id, now]);
    return { ok: true, cancelledNow: true, running: false };
  });
  if (changed) {
    const change = { taskId: id, runnable: false, cancelRequested: true };
    const woken = cancelled === undefined ? [] : parentChange(cancelled);
    feed.emitLocal([withCommitted(change, cancelled, codec.open), ...woken, ...others]);
  }
  return result;
}
