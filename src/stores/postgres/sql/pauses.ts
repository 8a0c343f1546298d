// SQL of the PostgreSQL task store. Operators' pauses: the pauses in force, and the tasks a claim found held back by
// one, out of the line until a resume gives them a new place in it (../pauses.ts).
import { MAX_PAUSES, type PauseKind } from '../../../tasks/pauses.js';
import { placedAgain, type Notify } from './fragments.js';

/** A task (alias `a`) paused (the rows of tasks_paused_tool and tasks_paused_key). */
const paused = (a: string): string => `${a}.paused_at IS NOT NULL AND ${a}.status = 'working'`;
/** The tasks (alias `a`) a pause of $1 within $2 ('' every tenant) holds back, by the column of its kind. */
const heldBy = (kind: PauseKind, a: string): string =>
  `${a}.${kind === 'tool' ? 'tool' : 'concurrency_key'} = $1 AND ($2 = '' OR ${a}.tenant = $2) AND ${paused(a)}`;

/**
 * $1 name, $2 tenant, $3 now, $4 how many: the first paused tasks the pause holds back (in their order in line) take
 * a new place in the main line, as a wait come due does, and become runnable. Returns their ids (and notifies).
 */
const resumeSql = (s: string, notify: Notify, kind: PauseKind): string => `
  WITH picked AS (
    SELECT p.id, p.tenant, p.principal, p.fair_at AS earlier, p.placed_at AS taken, p.created_at
    FROM ${s}.tasks p WHERE ${heldBy(kind, 'p')}
    ORDER BY p.fair_at, p.placed_at, p.created_at LIMIT $4
    FOR UPDATE SKIP LOCKED
  ), placed AS (${placedAgain(s, '$3::bigint')}
  ), woken AS (
    UPDATE ${s}.tasks t SET runnable = true, paused_at = NULL, fair_at = pl.fair_at, placed_at = $3,
      revision = t.revision + 1
    FROM placed pl WHERE t.id = pl.id
    RETURNING t.id
  )
  SELECT w.id, ${notify('w.id', 'true', 'false')} FROM woken w`;

/** `s`: the quoted schema name. */
export function pauseSql(s: string, notify: Notify) {
  return {
    listPauses: `SELECT kind, name, tenant, paused_at FROM ${s}.task_pauses ORDER BY kind, name, tenant
      LIMIT ${MAX_PAUSES}`,
    countPauses: `SELECT count(*)::int AS n FROM ${s}.task_pauses`,
    /** $1 kind, $2 name, $3 tenant, $4 now: a row when the pause was not in force. */
    insertPause: `INSERT INTO ${s}.task_pauses (kind, name, tenant, paused_at) VALUES ($1, $2, $3, $4)
      ON CONFLICT DO NOTHING RETURNING 1`,
    /** $1 kind, $2 name, $3 tenant: a row when the pause was in force. */
    deletePause: `DELETE FROM ${s}.task_pauses WHERE kind = $1 AND name = $2 AND tenant = $3 RETURNING 1`,
    /**
     * $1 id, $2 the claim's token, $3 now, $4 and $5 the lease the claim replaced: the claim is undone (token and
     * lease as they were: a takeover stays one) and the task taken out of the line, paused.
     */
    pauseClaimed: `
      WITH p AS (
        UPDATE ${s}.tasks t SET runnable = false, paused_at = $3, attempt = t.attempt - 1, lease_owner = $4,
          lease_until = $5, updated_at = $3, revision = t.revision + 1
        WHERE t.id = $1 AND t.attempt = $2
        RETURNING t.id
      ) SELECT ${notify('p.id', 'false', 'false')} FROM p`,
    resume: { tool: resumeSql(s, notify, 'tool'), key: resumeSql(s, notify, 'key') },
    /** $1 name, $2 tenant: how many tasks the pause holds back. */
    pausedCount: {
      tool: `SELECT count(*)::int AS n FROM ${s}.tasks a WHERE ${heldBy('tool', 'a')}`,
      key: `SELECT count(*)::int AS n FROM ${s}.tasks a WHERE ${heldBy('key', 'a')}`,
    },
    pausedByTool: `SELECT a.tool, count(*)::int AS n FROM ${s}.tasks a WHERE ${paused('a')} GROUP BY a.tool`,
  };
}
