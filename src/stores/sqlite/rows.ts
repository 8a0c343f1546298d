// Row types of the SQLite task tables and their mapping to domain types.
import type {
  NewTask,
  StepAttempts,
  TaskFailure,
  TaskInspection,
  TaskSnapshot,
  TaskStatus,
} from '../../tasks/task.js';
import { inspectionSteps, type DoneStep } from '../../tasks/inspection-steps.js';
import { openColumn, sealedAt, type Opener } from '../payload-sealing.js';
import { shownProgress, shownStatus } from '../shown-status.js';
import { toStatusHistory, type HistoryRow } from '../status-history.js';
import { toTaskHead } from '../task-head.js';

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
  /** Migration 8. */
  wake_at: number | null;
  idempotency_key: string | null;
  failure: string | null;
  /** Migration 12. */
  tool_version: string | null;
  /** The status message the task was created with ('' none; null: created before histories were kept). */
  created_message?: string | null;
  /** Migration 16 (shown-status.ts). */
  progress?: string | null;
  version_wait?: number | null;
  /** Migration 15: 1 when the task completed with a tool error. */
  tool_error: number;
  retry_of: string | null;
  /** Migration 19 (sql/slots.ts): the task's concurrency limit, and when a claim parked it (null: not parked). */
  concurrency_key?: string | null;
  concurrency_limit?: number | null;
  parked_at?: number | null;
}

export interface InputRow {
  key: string;
  request: string | null;
  answer: string | null;
}

/** `open` decrypts sealed payloads (identity when the store has no cipher). */
export function toSnapshot(row: TaskRow, outstanding: InputRow[], open: Opener = (s) => s): TaskSnapshot {
  const progress = shownProgress(row, open);
  const inputRequests: Record<string, Record<string, unknown>> = {};
  if (row.status === 'input_required') {
    for (const input of outstanding) {
      if (input.request !== null)
        inputRequests[input.key] = JSON.parse(
          open(input.request, sealedAt('task_inputs.request', row.id, input.key)),
        ) as Record<string, unknown>;
    }
  }
  return {
    id: row.id,
    status: row.status,
    statusMessage: shownStatus(row, open),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ttlMs: row.ttl_ms,
    pollIntervalMs: row.poll_interval_ms ?? undefined,
    inputRequests,
    result: openColumn<Record<string, unknown>>(row.result, 'tasks.result', row.id, open),
    error: openColumn<TaskSnapshot['error']>(row.error, 'tasks.error', row.id, open),
    ...(progress === undefined ? {} : { progress }),
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

/** Everything kept about a task, for operators. */
export function toInspection(
  row: TaskRow,
  kept: {
    done: DoneStep[];
    attempts: Record<string, StepAttempts>;
    history: HistoryRow[];
    retries: string[];
  },
  open: Opener,
): TaskInspection {
  return {
    ...toTaskHead(row, open),
    expiresAt: row.expires_at,
    leaseOwner: row.lease_owner ?? undefined,
    leaseUntil: row.lease_until ?? undefined,
    wakeAt: row.wake_at ?? undefined,
    cancelRequested: row.cancel_requested === 1,
    idempotencyKey: row.idempotency_key ?? undefined,
    retries: kept.retries,
    steps: inspectionSteps(kept.done, kept.attempts),
    history: toStatusHistory(
      { id: row.id, createdAt: row.created_at, createdMessage: row.created_message },
      kept.history,
      open,
    ),
    failure: openColumn<TaskFailure>(row.failure, 'tasks.failure', row.id, open),
    error: openColumn<TaskSnapshot['error']>(row.error, 'tasks.error', row.id, open),
  };
}
