// The fields every operator view of a task starts with (a search row, an inspection), read from a task row alike on
// both stores: times come as numbers, or as the strings of PostgreSQL's bigint.
import { outcomeOf, type TaskHead, type TaskStatus } from '../tasks/task.js';
import type { Opener } from './payload-sealing.js';
import { shownStatus, type ShownColumns } from './shown-status.js';

/** The columns the head is read from. */
export interface TaskHeadColumns extends ShownColumns {
  id: string;
  tenant: string;
  principal: string;
  tool: string;
  tool_version: string | null;
  status: TaskStatus;
  status_message: string | null;
  created_at: number | string;
  updated_at: number | string;
  attempt: number;
  /** 0/1 (SQLite) or a boolean (PostgreSQL). */
  tool_error: number | boolean;
  retry_of: string | null;
}

/** The head of a task row, its status message opened. */
export function toTaskHead(row: TaskHeadColumns, open: Opener): TaskHead {
  return {
    id: row.id,
    owner: { tenant: row.tenant, principal: row.principal },
    tool: row.tool,
    toolVersion: row.tool_version ?? undefined,
    status: row.status,
    outcome: outcomeOf(row.status, row.tool_error === true || row.tool_error === 1),
    // As its owner sees it: a task an operator paused says so (shown-status.ts).
    statusMessage: shownStatus(row, open),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    attempt: row.attempt,
    retryOf: row.retry_of ?? undefined,
  };
}
