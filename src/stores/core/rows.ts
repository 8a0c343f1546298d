// The `tasks` row as both stores read it, and its mapping to domain types: a snapshot, a claimed task, an
// inspection. SQLite gives numbers and 0/1 flags; PostgreSQL booleans, and bigint columns as strings.
import type {
  ClaimedTask,
  JsonObject,
  JsonValue,
  LookupMiss,
  StepAttempts,
  StepFailure,
  TaskFailure,
  TaskSnapshot,
  TaskStatus,
} from '../../tasks/task.js';
import type { ChildTaskRef, TaskInspection } from '../../tasks/inspection.js';
import { inspectionSteps, type DoneStep } from '../../tasks/inspection-steps.js';
import { toTraceContext, traceIdOf, type TraceContext } from '../../tasks/trace-context.js';
import { openCaps, openColumn, sealedAt, type Opener } from '../payload-sealing.js';
import { shownProgress, shownStatus } from '../shown-status.js';
import { toStatusHistory, type HistoryRow } from '../status-history.js';
import { toTaskHead } from '../task-head.js';

/** An integer column: a number, or the string of a PostgreSQL bigint (epoch ms fit a double). */
export type Int = number | string;
/** A flag column: 0/1 (SQLite) or a boolean (PostgreSQL). */
export type Flag = number | boolean;

export const isSet = (flag: Flag): boolean => flag === true || flag === 1;
// A column a statement does not select reads as undefined, as one that is null.
const orNull = (v: Int | null | undefined): number | null =>
  v === null || v === undefined ? null : Number(v);
const orUndefined = (v: Int | null | undefined): number | undefined =>
  v === null || v === undefined ? undefined : Number(v);

/** Whether a task that expires at `expiresAt` (null: never) has expired at `now`: at its expiry, it has. */
export const hasExpired = (expiresAt: Int | null, now: number): boolean =>
  expiresAt !== null && Number(expiresAt) <= now;

/** Why an owner-scoped lookup found nothing usable at `now`, or undefined when the row is live. */
export function missOf(row: { expires_at: Int | null } | undefined, now: number): LookupMiss | undefined {
  if (row === undefined) return 'not_found';
  return hasExpired(row.expires_at, now) ? 'expired' : undefined;
}

/** The columns of `tasks` (migration numbers: SQLite's, then PostgreSQL's). */
export interface TaskColumns<I extends Int = Int, F extends Flag = Flag, Caps = string> {
  id: string;
  tenant: string;
  principal: string;
  tool: string;
  args: string;
  status: TaskStatus;
  status_message: string | null;
  created_at: I;
  updated_at: I;
  ttl_ms: I | null;
  poll_interval_ms: I | null;
  expires_at: I | null;
  result: string | null;
  error: string | null;
  replay_after_crash: F;
  client_caps: Caps;
  runnable: F;
  cancel_requested: F;
  attempt: number;
  lease_owner: string | null;
  lease_until: I | null;
  sealed: F;
  /** Migration 8, 7. */
  wake_at: I | null;
  idempotency_key: string | null;
  failure: string | null;
  /** Migration 12, 11. */
  tool_version: string | null;
  /** The status message the task was created with ('' none; null: created before histories were kept). */
  created_message?: string | null;
  /** Migration 16, 15 (shown-status.ts). */
  progress?: string | null;
  version_wait?: number | null;
  /** Migration 15, 14: set when the task completed with a tool error. */
  tool_error: F;
  retry_of: string | null;
  /** Migration 19, 18 (slots): the task's concurrency limit, and when a claim parked it (null: not parked). */
  concurrency_key?: string | null;
  concurrency_limit?: number | null;
  parked_at?: I | null;
  /** Migration 25 (both, rate limits): the task's rate limit, and the start counted for its first run. */
  rate_key?: string | null;
  rate_limit?: number | null;
  rate_period_ms?: I | null;
  rate_reserved_at?: I | null;
  /** Migration 24 (pauses): when a claim found the task paused by an operator (null: not paused). */
  paused_at?: I | null;
  /** Migration 26 (both, debounce keys): the key a pending task holds for its window. */
  debounce_key?: string | null;
  /** Migration 31 (both, trace context): the W3C trace context the task's runs join. */
  trace_parent?: string | null;
  trace_state?: string | null;
  /** Migration 28 (both, child tasks): the task whose run started this one, and whether cancelling it leaves this. */
  parent_id?: string | null;
  detached?: F | null;
  /** Read with one task (getOwned): whether any task is its child. */
  has_children?: F | null;
}

/** The columns a snapshot is built from. */
export type SnapshotColumns = Pick<
  TaskColumns,
  | 'id'
  | 'status'
  | 'status_message'
  | 'created_at'
  | 'updated_at'
  | 'ttl_ms'
  | 'poll_interval_ms'
  | 'result'
  | 'error'
  | 'tool'
  | 'tool_version'
  | 'attempt'
  | 'version_wait'
  | 'progress'
  | 'concurrency_key'
  | 'parked_at'
  | 'rate_key'
  | 'paused_at'
> &
  Partial<Pick<TaskColumns, 'wake_at' | 'rate_reserved_at' | 'parent_id' | 'has_children'>>;

/** `[key, request]` of a task's outstanding inputs, in asking order (request null: none kept). */
export type Outstanding = Iterable<readonly [key: string, request: string | null]>;

/** `open` decrypts sealed payloads (identity when the store has no cipher). */
export function toSnapshot(row: SnapshotColumns, outstanding: Outstanding, open: Opener): TaskSnapshot {
  const inputRequests: Record<string, JsonObject> = {};
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
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    ttlMs: orNull(row.ttl_ms),
    pollIntervalMs: orUndefined(row.poll_interval_ms),
    inputRequests,
    result: openColumn<JsonObject>(row.result, 'tasks.result', row.id, open),
    error: openColumn<TaskSnapshot['error']>(row.error, 'tasks.error', row.id, open),
    ...(progress === undefined ? {} : { progress }),
    // Only where the read had them (a read of one task): a snapshot a write returned leaves them out.
    ...(typeof row.parent_id === 'string' ? { parentId: row.parent_id } : {}),
    ...(row.has_children === true || row.has_children === 1 ? { hasChildren: true } : {}),
  };
}

/** `[name, value]` of the task's done steps, in the order they were done. */
export function openSteps(id: string, rows: readonly (readonly [string, string])[], open: Opener) {
  const steps: Record<string, JsonValue> = {};
  for (const [name, value] of rows)
    steps[name] = JSON.parse(open(value, sealedAt('task_steps.value', id, name))) as JsonValue;
  return { steps, order: rows.map(([name]) => name) };
}

/** The answers among `[key, answer]` of the task's inputs (answer null: still open). */
export function openAnswers(
  id: string,
  rows: Iterable<readonly [string, string | null]>,
  open: Opener,
): Record<string, JsonObject> {
  const answers: Record<string, JsonObject> = {};
  for (const [key, answer] of rows)
    if (answer !== null)
      answers[key] = JSON.parse(open(answer, sealedAt('task_inputs.answer', id, key))) as JsonObject;
  return answers;
}

/** `[name, failed, last_failure]` of task_step_attempts. */
export type AttemptList = readonly (readonly [string, number, string])[];

export function openStepAttempts(id: string, list: AttemptList, open: Opener): Record<string, StepAttempts> {
  const out: Record<string, StepAttempts> = {};
  for (const [name, failed, last] of list)
    out[name] = {
      failed,
      last: JSON.parse(open(last, sealedAt('task_step_attempts.last_failure', id, name))) as StepFailure,
    };
  return out;
}

/** What a run starts from besides its task's row. */
export interface RunStart {
  /** The lease the claim took over (a crashed run's), if any. */
  takenOver: boolean;
  steps: readonly (readonly [string, string])[];
  /** `[key, answer]` of every input asked or given (answer null while open), in asking order. */
  inputs: readonly (readonly [string, string | null])[];
  attempts: AttemptList;
}

/** The task a claim hands to its run. */
export function toClaimedTask(
  row: TaskColumns<Int, Flag, unknown>,
  start: RunStart,
  open: Opener,
): ClaimedTask {
  const { steps, order } = openSteps(row.id, start.steps, open);
  const progress = shownProgress(row, open);
  return {
    id: row.id,
    owner: { tenant: row.tenant, principal: row.principal },
    tool: row.tool,
    toolVersion: row.tool_version ?? undefined,
    args: JSON.parse(open(row.args, sealedAt('tasks.args', row.id))) as JsonObject,
    token: row.attempt,
    takenOver: start.takenOver,
    replayAfterCrash: isSet(row.replay_after_crash),
    cancelRequested: isSet(row.cancel_requested),
    clientCapabilities: openCaps(row.id, row.client_caps as JsonObject | string, open),
    steps,
    stepOrder: order,
    stepAttempts: openStepAttempts(row.id, start.attempts, open),
    answers: openAnswers(row.id, start.inputs, open),
    askedKeys: start.inputs.map(([key]) => key),
    ...(progress === undefined ? {} : { progress }),
    ...traceOf(row),
  };
}

/** What is kept about a task besides its row, for operators. */
export interface InspectionParts {
  done: DoneStep[];
  attempts: AttemptList;
  history: HistoryRow[];
  /** Ids of the tasks retries made from this one, oldest first. */
  retries: string[];
  /** Its child tasks (ctx.callTool), in creation order, the first MAX_FAMILY_CHILDREN. */
  children: ChildTaskRef[];
}

/** Everything kept about a task, for operators. */
export function toInspection(
  row: TaskColumns<Int, Flag, unknown>,
  kept: InspectionParts,
  open: Opener,
): TaskInspection {
  return {
    ...toTaskHead(row, open),
    expiresAt: orNull(row.expires_at),
    leaseOwner: row.lease_owner ?? undefined,
    leaseUntil: orUndefined(row.lease_until),
    wakeAt: orUndefined(row.wake_at),
    cancelRequested: isSet(row.cancel_requested),
    idempotencyKey: row.idempotency_key ?? undefined,
    retries: kept.retries,
    ...(typeof row.parent_id === 'string' ? { parentId: row.parent_id } : {}),
    children: kept.children,
    steps: inspectionSteps(kept.done, openStepAttempts(row.id, kept.attempts, open)),
    history: toStatusHistory(
      { id: row.id, createdAt: Number(row.created_at), createdMessage: row.created_message },
      kept.history,
      open,
    ),
    failure: openColumn<TaskFailure>(row.failure, 'tasks.failure', row.id, open),
    error: openColumn<TaskSnapshot['error']>(row.error, 'tasks.error', row.id, open),
    ...traceIdOfRow(row),
  };
}

/** The kept trace context of a row, checked again as it is read (a row written by hand is not trusted). */
function traceOf(row: Pick<TaskColumns, 'trace_parent' | 'trace_state'>): { trace?: TraceContext } {
  const trace = toTraceContext(row.trace_parent, row.trace_state ?? undefined);
  return trace === undefined ? {} : { trace };
}

function traceIdOfRow(row: Pick<TaskColumns, 'trace_parent'>): { traceId?: string } {
  const traceId = traceIdOf(row.trace_parent);
  return traceId === undefined ? {} : { traceId };
}
