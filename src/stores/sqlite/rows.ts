// Row types of the SQLite task tables and their mapping to domain types.
import type { NewTask, TaskSnapshot, TaskStatus } from '../../tasks/task.js';

export interface TaskRow {
  id: string;
  tenant: string;
  principal: string;
  tool: string;
  args: string;
  status: TaskStatus;
  status_message: string | null;
  created_at: number;
  updated_at: number;
  ttl_ms: number | null;
  poll_interval_ms: number | null;
  expires_at: number | null;
  result: string | null;
  error: string | null;
  replay_after_crash: number;
  client_caps: string;
  runnable: number;
  cancel_requested: number;
  attempt: number;
  lease_owner: string | null;
  lease_until: number | null;
  sealed: number;
}

export interface InputRow {
  key: string;
  request: string | null;
  answer: string | null;
}

/** `open` decrypts sealed payloads (identity when the store has no cipher). */
export function toSnapshot(
  row: TaskRow,
  outstanding: InputRow[],
  open: (s: string) => string = (s) => s,
): TaskSnapshot {
  const inputRequests: Record<string, Record<string, unknown>> = {};
  if (row.status === 'input_required') {
    for (const input of outstanding) {
      if (input.request !== null)
        inputRequests[input.key] = JSON.parse(open(input.request)) as Record<string, unknown>;
    }
  }
  return {
    id: row.id,
    status: row.status,
    statusMessage: row.status_message ?? undefined,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ttlMs: row.ttl_ms,
    pollIntervalMs: row.poll_interval_ms ?? undefined,
    inputRequests,
    result: row.result === null ? undefined : (JSON.parse(open(row.result)) as Record<string, unknown>),
    error: row.error === null ? undefined : (JSON.parse(open(row.error)) as TaskSnapshot['error']),
  };
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
