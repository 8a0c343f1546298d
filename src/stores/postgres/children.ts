// Child tasks on PostgreSQL (migration 28): a child's ending wakes its parent (sql/children.ts, in the ending's own
// statement), and a cancel of a parent reaches its children in the parent's cancel transaction.
import type { TaskChange, TaskStore } from '../../tasks/store.js';
import type { TaskStatus } from '../../tasks/task.js';
import type { StoreContext } from './context.js';
import type { Run } from './db.js';
import { toNumber } from './rows.js';

/** What an ending statement with a `woke` CTE returns (sql/children.ts, PARENT_WOKEN). */
export interface ParentWoken {
  [column: string]: unknown;
  woken_parent?: string | null;
}

/** The change of the parent an ending made due, if it did (its notice went out with the statement). */
export const parentChange = (row: ParentWoken): TaskChange[] =>
  typeof row.woken_parent === 'string'
    ? [{ taskId: row.woken_parent, runnable: true, cancelRequested: false }]
    : [];

/**
 * Cancels the unfinished children of task `id` not detached, and theirs (inside the parent's cancel transaction,
 * `run`): a running one is asked to stop, any other ends cancelled now. Returns their changes, to emit on commit.
 */
export async function cancelChildren(
  { q }: StoreContext,
  run: Run,
  id: string,
  now: number,
): Promise<TaskChange[]> {
  const changes: TaskChange[] = [];
  const reached = await run<{ id: string; lease_owner: string | null; lease_until: string | number | null }>(
    q.attachedDescendants,
    [id],
  );
  for (const child of reached) {
    changes.push({ taskId: child.id, runnable: false, cancelRequested: true });
    if (child.lease_owner !== null && toNumber(child.lease_until ?? 0) > now)
      await run(q.flagCancel, [child.id]);
    else await run(q.cancelNow, [child.id, now]);
  }
  return changes;
}

/** Tasks that ended in a sweep: their parents told, each after the ending committed. */
export async function wakeParents(
  { db, q, feed }: StoreContext,
  ids: readonly string[],
  now: number,
): Promise<void> {
  if (ids.length === 0) return;
  const rows = await db.query<ParentWoken>(q.wakeParents, [ids, now]);
  feed.emitLocal(rows.flatMap(parentChange));
}

/** A task's parent and children, as its owner sees them. */
export function familyReads({ db, q }: StoreContext): Required<Pick<TaskStore, 'family'>> {
  return {
    async family(id, owner) {
      const [row] = await db.query<{
        parent_id: string | null;
        children: { id: string; tool: string; status: TaskStatus }[];
      }>(q.family, [id, owner.tenant, owner.principal]);
      if (row === undefined) return undefined;
      return { ...(row.parent_id === null ? {} : { parentId: row.parent_id }), children: row.children };
    },
  };
}
