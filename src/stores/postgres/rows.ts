// Row types of the PostgreSQL task tables and their mapping to domain types.
import type {
  ClaimedTask,
  JsonValue,
  JsonObject,
  StepAttempts,
  StepFailure,
  TaskFailure,
  TaskInspection,
  TaskSnapshot,
  TaskStatus,
} from '../../tasks/task.js';
import { inspectionSteps } from '../../tasks/inspection-steps.js';
import { openCaps, openColumn, sealedAt, type Opener } from '../payload-sealing.js';
import { shownProgress, shownStatus } from '../shown-status.js';
import { toStatusHistory, type HistoryRow } from '../status-history.js';
import { toTaskHead } from '../task-head.js';

/** bigint columns arrive as strings (pg does not guess at 64-bit precision); epoch ms fit a double. */
type Int8 = string | number;

export interface TaskRow {
  id: string;
  tenant: string;
  principal: string;
  tool: string;
  args: string;
  status: TaskStatus;
  status_message: string | null;
  created_at: Int8;
  updated_at: Int8;
  ttl_ms: Int8 | null;
  poll_interval_ms: Int8 | null;
  expires_at: Int8 | null;
  result: string | null;
  error: string | null;
  replay_after_crash: boolean;
  client_caps: JsonObject | string;
  runnable: boolean;
  cancel_requested: boolean;
  attempt: number;
  lease_owner: string | null;
  lease_until: Int8 | null;
  sealed: boolean;
  /** Grows with every UPDATE of the row (migration 6). */
  revision: Int8;
  /** Migration 7. */
  wake_at: Int8 | null;
  idempotency_key: string | null;
  failure: string | null;
  /** Migration 11. */
  tool_version: string | null;
  /** The status message the task was created with ('' none; null: created before histories were kept). */
  created_message?: string | null;
  /** Migration 15 (shown-status.ts). */
  progress?: string | null;
  version_wait?: number | null;
  /** Migration 14. */
  tool_error: boolean;
  retry_of: string | null;
  /** Migration 18 (slots.ts): the task's concurrency limit, and when a claim parked it (null: not parked). */
  concurrency_key?: string | null;
  concurrency_limit?: number | null;
  parked_at?: Int8 | null;
  [column: string]: unknown;
}

/** The columns a snapshot is built from, as the statements that commit a change return them (SNAPSHOT_COLUMNS). */
export type SnapshotColumns = Pick<
  TaskRow,
  | 'id'
  | 'status'
  | 'status_message'
  | 'created_at'
  | 'updated_at'
  | 'ttl_ms'
  | 'poll_interval_ms'
  | 'expires_at'
  | 'result'
  | 'error'
  | 'revision'
  | 'tool'
  | 'tool_version'
  | 'attempt'
  | 'version_wait'
  | 'progress'
  | 'concurrency_key'
  | 'parked_at'
>;

/** `[key, request]` pairs of outstanding inputs, in asking order (json_agg). */
export type OutstandingList = [string, string | null][] | null;

export interface SnapshotRow extends TaskRow {
  outstanding: OutstandingList;
}

export interface ClaimRow extends TaskRow {
  previous_owner: string | null;
  /** The lease the claim replaced (null: none): what a claim parking the task puts back (slots.ts). */
  previous_until: Int8 | null;
  /** `[name, value]` pairs. */
  steps: [string, string][];
  /** `[key, answer]` pairs of every input ever asked or given (answer null while open). */
  inputs: [string, string | null][];
  attempts: AttemptList;
}

/** `[name, failed, last_failure]` of task_step_attempts. */
export type AttemptList = [string, number, string][];

export interface InspectRow extends TaskRow {
  /** `[name, started_at, saved_at, seq]` of task_steps. */
  done_steps: [string, number | null, number | null, number | null][];
  attempts: AttemptList;
  history: HistoryRow[];
  /** Ids of the tasks retries made from this one, oldest first. */
  retries: string[];
}

function toStepAttempts(id: string, list: AttemptList, open: Opener): Record<string, StepAttempts> {
  const out: Record<string, StepAttempts> = {};
  for (const [name, failed, last] of list)
    out[name] = {
      failed,
      last: JSON.parse(open(last, sealedAt('task_step_attempts.last_failure', id, name))) as StepFailure,
    };
  return out;
}

export const toNumber = (v: Int8): number => (typeof v === 'number' ? v : Number(v));
export const toNumberOrNull = (v: Int8 | null): number | null => (v === null ? null : toNumber(v));

/** `open` decrypts sealed payloads (identity when the store has no cipher). */
export function toSnapshot(
  row: SnapshotColumns & { outstanding?: OutstandingList },
  open: Opener,
): TaskSnapshot {
  const inputRequests: Record<string, JsonObject> = {};
  const outstanding = row.outstanding ?? [];
  if (row.status === 'input_required') {
    for (const [key, request] of outstanding) {
      if (request !== null)
        inputRequests[key] = JSON.parse(
          open(request, sealedAt('task_inputs.request', row.id, key)),
        ) as JsonObject;
    }
  }
  const progress = shownProgress(row, open);
  return {
    id: row.id,
    status: row.status,
    statusMessage: shownStatus(row, open),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
    ttlMs: toNumberOrNull(row.ttl_ms),
    pollIntervalMs: row.poll_interval_ms === null ? undefined : toNumber(row.poll_interval_ms),
    inputRequests,
    result: openColumn<JsonObject>(row.result, 'tasks.result', row.id, open),
    error: openColumn<TaskSnapshot['error']>(row.error, 'tasks.error', row.id, open),
    revision: toNumber(row.revision),
    ...(progress === undefined ? {} : { progress }),
  };
}

export function toClaimedTask(row: ClaimRow, open: Opener): ClaimedTask {
  const steps: Record<string, JsonValue> = {};
  const stepOrder: string[] = [];
  for (const [name, value] of row.steps) {
    steps[name] = JSON.parse(open(value, sealedAt('task_steps.value', row.id, name))) as JsonValue;
    stepOrder.push(name);
  }
  const answers: Record<string, JsonObject> = {};
  for (const [key, answer] of row.inputs) {
    if (answer !== null)
      answers[key] = JSON.parse(open(answer, sealedAt('task_inputs.answer', row.id, key))) as JsonObject;
  }
  const progress = shownProgress(row, open);
  return {
    id: row.id,
    owner: { tenant: row.tenant, principal: row.principal },
    tool: row.tool,
    toolVersion: row.tool_version ?? undefined,
    args: JSON.parse(open(row.args, sealedAt('tasks.args', row.id))) as JsonObject,
    token: row.attempt,
    takenOver: row.previous_owner !== null,
    replayAfterCrash: row.replay_after_crash,
    cancelRequested: row.cancel_requested,
    clientCapabilities: openCaps(row.id, row.client_caps, open),
    steps,
    stepOrder,
    stepAttempts: toStepAttempts(row.id, row.attempts, open),
    answers,
    askedKeys: row.inputs.map(([key]) => key),
    ...(progress === undefined ? {} : { progress }),
  };
}

/** Everything kept about a task, for operators. */
export function toInspection(row: InspectRow, open: Opener): TaskInspection {
  const attempts = toStepAttempts(row.id, row.attempts, open);
  return {
    ...toTaskHead(row, open),
    expiresAt: toNumberOrNull(row.expires_at),
    leaseOwner: row.lease_owner ?? undefined,
    leaseUntil: row.lease_until === null ? undefined : toNumber(row.lease_until),
    wakeAt: row.wake_at === null ? undefined : toNumber(row.wake_at),
    cancelRequested: row.cancel_requested,
    idempotencyKey: row.idempotency_key ?? undefined,
    retries: row.retries,
    steps: inspectionSteps(
      row.done_steps.map(([name, startedAt, savedAt, seq]) => ({ name, startedAt, savedAt, seq })),
      attempts,
    ),
    history: toStatusHistory(
      { id: row.id, createdAt: toNumber(row.created_at), createdMessage: row.created_message },
      row.history,
      open,
    ),
    failure: openColumn<TaskFailure>(row.failure, 'tasks.failure', row.id, open),
    error: openColumn<TaskSnapshot['error']>(row.error, 'tasks.error', row.id, open),
  };
}
