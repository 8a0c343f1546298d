// Prepared SQL of the SQLite task store. Rate limits per key: the row of each key (its theoretical arrival time),
// the start counted or reserved on a task, and the tasks waiting for a reserved start (docs/task-store-design.md,
// "Rate limits"). Every write runs inside the claim's write transaction, which no other process shares.
import type { SqliteDatabase } from '../database.js';

/** How many rows of keys whose time is past one sweep deletes at most (more go on the next). */
export const SWEPT_RATE_ROWS = 1_000;
/** A task waiting for the start a claim reserved for it (among the rows of tasks_rate_waits: not started yet). */
const RATE_WAIT = `rate_key IS NOT NULL AND attempt = 0 AND status = 'working' AND wake_at IS NOT NULL`;

export function prepareRateQueries(db: SqliteDatabase) {
  const tat = db.prepare(`SELECT tat FROM rate_limits WHERE key = ?`).pluck();
  const setTat = db.prepare(
    `INSERT INTO rate_limits (key, tat) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET tat = excluded.tat`,
  );
  const counted = db.prepare(`UPDATE tasks SET rate_reserved_at = ? WHERE id = ?`);
  // Waits like a sleep (requeueWoken makes it runnable when due), its start counted.
  const reserve = db.prepare(`
    UPDATE tasks SET runnable = 0, wake_at = @at, rate_reserved_at = @at, updated_at = @now WHERE id = @id`);
  const dropPast = db.prepare(`
    DELETE FROM rate_limits WHERE key IN (
      SELECT key FROM rate_limits INDEXED BY rate_limits_tat WHERE tat < ? LIMIT ${SWEPT_RATE_ROWS})`);
  const waitsByTool = db.prepare(
    `SELECT tool, count(*) AS n FROM tasks INDEXED BY tasks_rate_waits WHERE ${RATE_WAIT} GROUP BY tool`,
  );
  return {
    /** The theoretical arrival time of `key` (undefined: no row). */
    rateTat: (key: string) => tat.get(key) as number | undefined,
    setRateTat: (key: string, value: number) => setTat.run(key, value),
    /** Task `id`'s first run was counted at `now`: it starts now. */
    rateCounted: (id: string, now: number) => counted.run(now, id),
    /** Task `id`'s first run was counted for `at`: it waits until then. */
    rateReserve: (id: string, at: number, now: number) => reserve.run({ id, at, now }),
    /** Deletes rows of keys whose time is past (they mean the same as none); how many. */
    dropPastRates: (now: number) => dropPast.run(now).changes,
    rateWaitsByTool: () => waitsByTool.all() as { tool: string; n: number }[],
  };
}
