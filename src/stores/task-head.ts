// The fields every operator view of a task starts with (a search row, an inspection), read from a task row alike on
// both stores: times come as numbers, or as the strings of PostgreSQL's bigint.
import type { TaskInspection } from '../tasks/task.js';
import { openStatus, type Opener } from './payload-sealing.js';

/** The columns the head is read from. */
export interface TaskHeadColumns {
  id: string;
  tenant: string;
  principal: string;
  tool: string;
  tool_version: string | null;
  status: TaskInspection['status'];
  status_message: string | null;
  created_at: number | string;
  updated_at: number | string;
  attempt: number;
}

export type TaskHead = Pick<
  TaskInspection,
  'id' | 'owner' | 'tool' | 'toolVersion' | 'status' | 'statusMessage' | 'createdAt' | 'updatedAt' | 'attempt'
>;

/** The head of a task row, its status message opened. */
export function toTaskHead(row: TaskHeadColumns, open: Opener): TaskHead {
  return {
    id: row.id,
    owner: { tenant: row.tenant, principal: row.principal },
    tool: row.tool,
    toolVersion: row.tool_version ?? undefined,
    status: row.status,
    statusMessage: openStatus(row.id, row.status_message, open),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    attempt: row.attempt,
  };
}
