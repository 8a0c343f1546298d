// Prepared SQL of the SQLite task store. Child tasks (migration 28, ctx.callTool): the parent woken by its child's
// ending, the children a cancel of their parent reaches, and a task's parent and children as its owner sees them.
import type { TaskFamily } from '../../../tasks/store.js';
import type { TaskOwner } from '../../../tasks/task.js';
import type { ChildTaskRef } from '../../../tasks/inspection.js';
import type { SqliteDatabase } from '../database.js';
import { MAX_FAMILY_CHILDREN } from '../../core/children.js';
import { NON_TERMINAL } from './conditions.js';

export function prepareChildQueries(db: SqliteDatabase) {
  // In the child's ending transaction: the parent notes it (child_ended), and a wait it is in ends now. Only once the
  // child has ended: a run that ends waiting or asking for input ends cancelled when a cancel was requested meanwhile.
  const wakeParent = db.prepare(`
    UPDATE tasks SET child_ended = 1,
      wake_at = CASE WHEN wake_at IS NOT NULL AND wake_at > @now THEN @now ELSE wake_at END
    WHERE id = (SELECT parent_id FROM tasks WHERE id = @child AND status IN ('completed','failed','cancelled'))
      AND ${NON_TERMINAL}
    RETURNING id, wake_at`);
  // The unfinished tasks a cancel of task ? reaches: its children not detached, theirs, and so on.
  const attached = db.prepare(`
    WITH RECURSIVE reached(id) AS (
      SELECT id FROM tasks WHERE parent_id = ? AND detached IS NULL
      UNION SELECT t.id FROM tasks t JOIN reached r ON t.parent_id = r.id WHERE t.detached IS NULL
    )
    SELECT t.id, t.lease_owner, t.lease_until FROM reached r JOIN tasks t ON t.id = r.id WHERE t.${NON_TERMINAL}`);
  const parentOf = db
    .prepare(`SELECT parent_id FROM tasks WHERE id = ? AND tenant = ? AND principal = ?`)
    .pluck();
  const children = db.prepare(`
    SELECT id, tool, status FROM tasks WHERE parent_id = ? AND tenant = ? AND principal = ?
    ORDER BY created_at, id LIMIT ${MAX_FAMILY_CHILDREN}`);
  // An operator's view (any owner): the first children in creation order.
  const childrenOf = db.prepare(`
    SELECT id, tool, status FROM tasks WHERE parent_id = ? ORDER BY created_at, id LIMIT ${MAX_FAMILY_CHILDREN}`);
  return {
    childrenOf: (id: string) => childrenOf.all(id) as ChildTaskRef[],
    /** The parent of `child`, told that it ended: its id, and whether its wait ended now (it is due). */
    wakeParent(child: string, now: number): { id: string; due: boolean } | undefined {
      const row = wakeParent.get({ child, now }) as { id: string; wake_at: number | null } | undefined;
      return row === undefined ? undefined : { id: row.id, due: row.wake_at !== null && row.wake_at <= now };
    },
    attachedDescendants: (id: string) =>
      attached.all(id) as { id: string; lease_owner: string | null; lease_until: number | null }[],
    family(id: string, owner: TaskOwner): TaskFamily | undefined {
      const parent = parentOf.get(id, owner.tenant, owner.principal) as string | null | undefined;
      if (parent === undefined) return undefined;
      const rows = children.all(id, owner.tenant, owner.principal) as ChildTaskRef[];
      return { ...(parent === null ? {} : { parentId: parent }), children: rows };
    },
  };
}
