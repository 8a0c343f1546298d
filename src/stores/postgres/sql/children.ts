// SQL of the PostgreSQL task store. Child tasks (migration 28, ctx.callTool): the parent woken by its child's ending
// (a CTE of the ending statement, so in its transaction), the children a cancel of their parent reaches, and a task's
// parent and children as its owner sees them.
import { MAX_FAMILY_CHILDREN } from '../../core/children.js';
import { NON_TERMINAL, OWNED_BY, type Notify } from './fragments.js';

/**
 * A CTE body (name it `woke`) that tells the parent of the task a CTE `ended` returned (its `parent_id`) that it
 * ended, at `now` (an SQL expression): child_ended set, and a wait it is in ends now (`due`). Locks the parent's row,
 * so a wait the parent begins meanwhile (endings.ts, wait) reads child_ended once this commits.
 */
export const WAKE_PARENT = (s: string, ended: string, now: string): string => `
  UPDATE ${s}.tasks p SET child_ended = true,
    wake_at = CASE WHEN p.wake_at IS NOT NULL AND p.wake_at > ${now} THEN ${now} ELSE p.wake_at END,
    revision = p.revision + 1
  FROM ${ended} c WHERE p.id = c.parent_id AND p.status IN ('working','input_required')
  RETURNING p.id, p.wake_at IS NOT NULL AND p.wake_at <= ${now} AS due`;

/** Select-list items after a `woke` CTE (WAKE_PARENT): the parent made due (its id, or null), notified. */
export const PARENT_WOKEN = (notify: Notify): string => `
  (SELECT w.id FROM woke w WHERE w.due LIMIT 1) AS woken_parent,
  (SELECT ${notify('w.id', 'true', 'false')} FROM woke w WHERE w.due LIMIT 1) AS parent_notified`;

/** `s`: the quoted schema name. */
export function childSql(s: string, notify: Notify) {
  return {
    /** $1 ids of ended tasks, $2 now: their parents told (WAKE_PARENT), after the endings committed (the sweeps). */
    wakeParents: `
      WITH ended AS (
        SELECT DISTINCT parent_id FROM ${s}.tasks WHERE id = ANY($1::text[]) AND parent_id IS NOT NULL
      ), woke AS (${WAKE_PARENT(s, 'ended', '$2::bigint')})
      SELECT w.id AS woken_parent, ${notify('w.id', 'true', 'false')} FROM woke w WHERE w.due`,

    /**
     * $1 a task's id: its unfinished children not detached, theirs, and so on (a cancel of the task reaches them),
     * locked: their lease as read stays true until the cancel commits (a run that ends meanwhile waits for it, then
     * sees the cancel), and a child that ended before is left out.
     */
    attachedDescendants: `
      WITH RECURSIVE reached(id) AS (
        SELECT id FROM ${s}.tasks WHERE parent_id = $1 AND detached IS NULL
        UNION SELECT t.id FROM ${s}.tasks t JOIN reached r ON t.parent_id = r.id WHERE t.detached IS NULL
      )
      SELECT t.id, t.lease_owner, t.lease_until FROM reached r JOIN ${s}.tasks t ON t.id = r.id
      WHERE t.${NON_TERMINAL} ORDER BY t.id FOR UPDATE OF t`,

    /** $1 id, $2 tenant, $3 principal: the task's parent (null: none) and its first children. */
    family: `
      SELECT t.parent_id, coalesce((
        SELECT json_agg(json_build_object('id', c.id, 'tool', c.tool, 'status', c.status) ORDER BY c.created_at, c.id)
        FROM (SELECT id, tool, status, created_at FROM ${s}.tasks
          WHERE parent_id = t.id AND tenant = t.tenant AND principal = t.principal
          ORDER BY created_at, id LIMIT ${MAX_FAMILY_CHILDREN}) c
      ), '[]'::json) AS children
      FROM ${s}.tasks t WHERE t.id = $1 AND ${OWNED_BY('t.')}`,
  };
}
