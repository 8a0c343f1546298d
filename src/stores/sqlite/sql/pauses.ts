// Prepared SQL of the SQLite task store. Operators' pauses: the pauses in force, and the tasks a claim found held back
// by one, out of the line until a resume gives them a new place in it (pauses.ts).
import type { SqliteDatabase } from '../database.js';
import { MAX_PAUSES, type PauseKind } from '../../../tasks/pauses.js';
import { FAIR_PLACE } from './conditions.js';

/** A task paused (the rows of tasks_paused_tool and tasks_paused_key). */
const PAUSED = `paused_at IS NOT NULL AND status = 'working'`;
/** The paused tasks a pause of @name within @tenant ('' every tenant) holds back, by the index of its kind. */
const held = (kind: PauseKind): string =>
  kind === 'tool'
    ? `tasks INDEXED BY tasks_paused_tool WHERE tool = @name AND (@tenant = '' OR tenant = @tenant) AND ${PAUSED}`
    : `tasks INDEXED BY tasks_paused_key WHERE concurrency_key = @name AND (@tenant = '' OR tenant = @tenant) AND ${PAUSED}`;

/** A pause as stored: tenant '' for every tenant. */
export interface PauseRow {
  kind: PauseKind;
  name: string;
  tenant: string;
  paused_at: number;
}

/** A paused task, as resuming reads it. */
export interface PausedTask {
  id: string;
  tenant: string;
  principal: string;
}

export function preparePauseQueries(db: SqliteDatabase) {
  const list = db.prepare(
    `SELECT kind, name, tenant, paused_at FROM task_pauses ORDER BY kind, name, tenant LIMIT ${MAX_PAUSES}`,
  );
  const count = db.prepare(`SELECT count(*) FROM task_pauses`).pluck();
  const insert = db.prepare(
    `INSERT INTO task_pauses (kind, name, tenant, paused_at) VALUES (@kind, @name, @tenant, @now) ON CONFLICT DO NOTHING`,
  );
  const remove = db.prepare(
    `DELETE FROM task_pauses WHERE kind = @kind AND name = @name AND tenant = @tenant`,
  );
  const pauseTask = db.prepare(
    `UPDATE tasks SET runnable = 0, paused_at = @now, updated_at = @now WHERE id = @id`,
  );
  const heads = {
    tool: db.prepare(
      `SELECT id, tenant, principal FROM ${held('tool')} ORDER BY fair_at, placed_at, created_at LIMIT @n`,
    ),
    key: db.prepare(
      `SELECT id, tenant, principal FROM ${held('key')} ORDER BY fair_at, placed_at, created_at LIMIT @n`,
    ),
  };
  const counts = {
    tool: db.prepare(`SELECT count(*) FROM ${held('tool')}`).pluck(),
    key: db.prepare(`SELECT count(*) FROM ${held('key')}`).pluck(),
  };
  const resumeTask = db.prepare(
    `UPDATE tasks SET runnable = 1, paused_at = NULL, fair_at = ${FAIR_PLACE}, placed_at = @now WHERE id = @id`,
  );
  const pausedByTool = db.prepare(
    `SELECT tool, count(*) AS n FROM tasks INDEXED BY tasks_paused_tool WHERE ${PAUSED} GROUP BY tool`,
  );
  return {
    /** The pauses in force (at most MAX_PAUSES). */
    pausesInForce: () => list.all() as PauseRow[],
    pauseCount: () => count.get() as number,
    /** Sets a pause; false when it was in force already. */
    insertPause: (kind: PauseKind, name: string, tenant: string, now: number) =>
      insert.run({ kind, name, tenant, now }).changes === 1,
    /** Lifts a pause; false when there was none. */
    deletePause: (kind: PauseKind, name: string, tenant: string) =>
      remove.run({ kind, name, tenant }).changes === 1,
    /** Takes task `id` out of the line, paused (its place kept for the order of resuming). */
    pauseTask: (id: string, now: number) => pauseTask.run({ id, now }),
    /** The first `n` tasks a pause holds back, in their order in line. */
    pausedHeads: (kind: PauseKind, name: string, tenant: string, n: number) =>
      heads[kind].all({ name, tenant, n }) as PausedTask[],
    /** How many tasks a pause holds back. */
    pausedCount: (kind: PauseKind, name: string, tenant: string) =>
      counts[kind].get({ name, tenant }) as number,
    /** Makes a paused task runnable again, at a new place in line (as a wait come due takes). */
    resumeTask: (t: PausedTask, now: number) =>
      resumeTask.run({ id: t.id, tenant: t.tenant, principal: t.principal, now }),
    /** The paused tasks, by tool. */
    pausedByTool: () => pausedByTool.all() as { tool: string; n: number }[],
  };
}
