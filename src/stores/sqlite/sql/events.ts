// Prepared SQL of the SQLite task store. The change log (task_events) that other processes on the file read.
import type { SqliteDatabase } from '../database.js';

export function prepareEventQueries(db: SqliteDatabase) {
  const logEvent = db.prepare(
    `INSERT INTO task_events (task_id, runnable, cancel, origin, at) VALUES (?, ?, ?, ?, ?)`,
  );
  const eventsAfter = db.prepare(
    `SELECT seq, task_id, runnable, cancel FROM task_events WHERE seq > ? AND origin != ? ORDER BY seq LIMIT 10000`,
  );
  const maxEventSeq = db.prepare(`SELECT coalesce(max(seq), 0) FROM task_events`).pluck();
  const pruneEvents = db.prepare(`DELETE FROM task_events WHERE at < ?`);
  return {
    logEvent: (taskId: string, runnable: boolean, cancel: boolean, origin: string, at: number) =>
      logEvent.run(taskId, runnable ? 1 : 0, cancel ? 1 : 0, origin, at),
    eventsAfter: (seq: number, origin: string) =>
      eventsAfter.all(seq, origin) as { seq: number; task_id: string; runnable: number; cancel: number }[],
    maxEventSeq: () => maxEventSeq.get() as number,
    pruneEvents: (before: number) => pruneEvents.run(before),
  };
}
