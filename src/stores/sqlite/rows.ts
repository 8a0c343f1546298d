// Row types of the SQLite task tables (core/rows.ts maps them to domain types).
import type { NewTask, TaskSnapshot } from '../../tasks/task.js';
import type { TaskColumns } from '../core/rows.js';

/** A row of `tasks`: integers as numbers, flags as 0/1, capabilities as text. */
export type TaskRow = TaskColumns<number, number, string>;

export interface InputRow {
  key: string;
  request: string | null;
  answer: string | null;
}

/** The snapshot of a task just inserted, built without reading it back. */
export function newSnapshot(task: NewTask): TaskSnapshot {
  return {
    id: task.id,
    status: 'working',
    statusMessage: task.statusMessage,
    createdAt: task.createdAt,
    updatedAt: task.createdAt,
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
    inputRequests: {},
    result: undefined,
    error: undefined,
  };
}
