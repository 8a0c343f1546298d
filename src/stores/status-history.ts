// A task's status history as both stores keep it (task_history, written by triggers): rows to domain entries.
import type { TaskStatus, TaskStatusChange } from '../tasks/task.js';
import { openStatus, type Opener } from './payload-sealing.js';

/** One task_history row, oldest first: `[at, status, message]` (message as the task row keeps it, maybe sealed). */
export type HistoryRow = [number | string, TaskStatus, string | null];

/** The entries of a task's history, its messages opened as the task's status message is. */
export function toStatusHistory(id: string, rows: readonly HistoryRow[], open: Opener): TaskStatusChange[] {
  return rows.map(([at, status, message]) => {
    const statusMessage = openStatus(id, message, open);
    return statusMessage === undefined
      ? { at: Number(at), status }
      : { at: Number(at), status, statusMessage };
  });
}
