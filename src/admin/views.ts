// What the operator API sends of a task: owners flattened, times as ISO 8601, absent fields left out, and never an
// argument, a result or an error's data (unless the API is told to show payloads: actions.ts adds them). Each view
// is checked against its public shape (shapes.ts).
import type { AdminHealthComponent, AdminOverview, AdminTaskSummary } from '../tasks/admin.js';
import { errorOutcomeOf } from '../tasks/error-outcome.js';
import type { OutOfScopeTasks } from '../tasks/store.js';
import type { StepFailure, TaskError, TaskFailure, TaskHead } from '../tasks/task.js';
import type { TaskInspection } from '../tasks/inspection.js';
import { stepDuration } from '../tasks/inspection.js';
import type {
  HealthJson,
  OverviewJson,
  StepFailureJson,
  TaskDetailJson,
  TaskFailureJson,
  TaskRowJson,
} from './shapes.js';

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrUndefined = (ms: number | null | undefined): string | undefined =>
  ms === undefined || ms === null ? undefined : iso(ms);

/** A task's error without its data (which may quote what a tool returned), but with its outcome word if any. */
const errorView = (error: (Pick<TaskError, 'code' | 'message'> & { outcome?: string }) | undefined) =>
  error === undefined
    ? undefined
    : {
        code: error.code,
        message: error.message,
        ...(error.outcome === undefined ? {} : { outcome: error.outcome }),
      };

/** A task's error as operators see it: code, message and the outcome word of its data, never the rest of it. */
export function errorSummary(error: TaskError): { code: number; message: string; outcome?: string } {
  const outcome = errorOutcomeOf(error);
  return { code: error.code, message: error.message, ...(outcome === null ? {} : { outcome }) };
}

/** What a search row and a detail both start with. */
const headView = (task: TaskHead) => ({
  id: task.id,
  tenant: task.owner.tenant,
  principal: task.owner.principal,
  tool: task.tool,
  toolVersion: task.toolVersion,
  status: task.status,
  outcome: task.outcome,
  statusMessage: task.statusMessage,
  createdAt: iso(task.createdAt),
  updatedAt: iso(task.updatedAt),
  attempt: task.attempt,
  retryOf: task.retryOf,
});

/** A row of a search. */
export const summaryView = (task: AdminTaskSummary) =>
  ({ ...headView(task), error: errorView(task.error) }) satisfies TaskRowJson;

const stepFailureView = (failure: StepFailure | undefined): StepFailureJson | undefined =>
  failure === undefined ? undefined : { ...failure, at: iso(failure.at) };

const failureView = (failure: TaskFailure | undefined): TaskFailureJson | undefined =>
  failure === undefined ? undefined : { ...failure, at: iso(failure.at) };

/** A task's detail: what TaskStore.inspect keeps, without payloads. */
export const detailView = (task: TaskInspection) =>
  ({
    ...headView(task),
    expiresAt: isoOrUndefined(task.expiresAt),
    leaseOwner: task.leaseOwner,
    leaseUntil: isoOrUndefined(task.leaseUntil),
    wakeAt: isoOrUndefined(task.wakeAt),
    cancelRequested: task.cancelRequested,
    idempotencyKey: task.idempotencyKey,
    traceId: task.traceId,
    // Only from a store that lists them, and only when there are any.
    retries: task.retries === undefined || task.retries.length === 0 ? undefined : task.retries,
    parentId: task.parentId,
    children: task.children === undefined || task.children.length === 0 ? undefined : task.children,
    steps: task.steps.map((step) => ({
      name: step.name,
      done: step.done,
      failedAttempts: step.failedAttempts,
      lastFailure: stepFailureView(step.lastFailure),
      startedAt: isoOrUndefined(step.startedAt),
      savedAt: isoOrUndefined(step.savedAt),
      durationMs: stepDuration(step),
    })),
    // Oldest first; absent from a store that keeps none.
    history: task.history?.map((change) => ({
      at: iso(change.at),
      status: change.status,
      statusMessage: change.statusMessage,
    })),
    // Only while the task waits for input: the keys of the requests still unanswered (never their content).
    pendingInputs: task.pendingInputs,
    failure: failureView(task.failure),
    error: task.error === undefined ? undefined : errorSummary(task.error),
  }) satisfies TaskDetailJson;

/** The overview's counts, and for operators of every tenant what waits for code (actions.ts decides). */
export const overviewView = (counts: AdminOverview, waitingForCode: readonly OutOfScopeTasks[] | undefined) =>
  ({
    byStatus: counts.byStatus,
    byOutcome: counts.byOutcome,
    byTool: counts.byTool,
    windows: counts.windows,
    stuck: counts.stuck,
    waitingForCode: waitingForCode?.map((w) => ({ tool: w.tool, version: w.version, count: w.count })),
  }) satisfies OverviewJson;

/** The health components a server reports (its `health` option), times as ISO 8601. */
export const healthView = (components: readonly AdminHealthComponent[]) =>
  ({
    components: components.map((c) => ({ ...c, since: isoOrUndefined(c.since) })),
  }) satisfies HealthJson;
