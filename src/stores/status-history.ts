// A task's status history as both stores keep it: its creation (tasks.created_message) and its later changes
// (task_history, written by a trigger), rows to domain entries.
import type { TaskStatus, TaskStatusChange } from '../tasks/task.js';
import { openStatus, type Opener } from './payload-sealing.js';

/** One task_history row, oldest first: `[seq, at, status, message]` (message as the task row keeps it, maybe sealed). */
export type HistoryRow = [number, number | string, TaskStatus, string | null];

/** What the task row says of its creation: `created_message` is null for a task stored before histories were kept. */
export interface HistoryStart {
  id: string;
  createdAt: number;
  createdMessage: string | null | undefined;
}

/**
 * The entries of a task's history, its messages opened as the task's status message is. The creation comes first
 * when the task was created with a history and none of its changes were let go (the first kept is the first made).
 */
export function toStatusHistory(
  task: HistoryStart,
  rows: readonly HistoryRow[],
  open: Opener,
): TaskStatusChange[] {
  const entry = (at: number, status: TaskStatus, message: string | null): TaskStatusChange => {
    const statusMessage = message === null || message === '' ? undefined : openStatus(task.id, message, open);
    return statusMessage === undefined ? { at, status } : { at, status, statusMessage };
  };
  const changes = rows.map(([, at, status, message]) => entry(Number(at), status, message));
  const created = task.createdMessage;
  const first = rows[0];
  if (created === null || created === undefined || (first !== undefined && Number(first[0]) !== 1))
    return changes;
  return [entry(task.createdAt, 'working', created), ...changes];
}
