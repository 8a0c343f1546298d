// What operators may see and do with every task, whoever owns it, within the tenants they are scoped to: the store
// port behind the operator API, the `durable-mcp admin` commands and the dashboard. Owners' paths never use it.
import type { AdminFlowKey, AdminPause, AdminPauseResult, AdminResumeResult, PauseTarget } from './pauses.js';
import type { JsonValue, TaskHead, TaskOutcome, TaskStatus } from './task.js';
import type { TaskInspection } from './inspection.js';

/** The tenants an operator may see and act on: all of them, or a list. */
export type AdminScope = { tenants: 'all' } | { tenants: readonly string[] };

/** Whether a task of `tenant` is within the operator's scope. */
export const inAdminScope = (scope: AdminScope, tenant: string): boolean =>
  scope.tenants === 'all' || scope.tenants.includes(tenant);

/** Filters of a task search; every one given must hold. Times are ms since the epoch, ranges half-open [from, to). */
export interface AdminTaskFilter {
  tenant?: string;
  principal?: string;
  tool?: string;
  toolVersion?: string;
  /** Any of these statuses. */
  status?: readonly TaskStatus[];
  /** Any of these outcomes (finished tasks only: a tool error is `tool_error`, not `completed`). */
  outcome?: readonly TaskOutcome[];
  createdFrom?: number;
  createdTo?: number;
  updatedFrom?: number;
  updatedTo?: number;
  /** Only tasks that failed or ended in a tool error (true), or neither (false). */
  hasError?: boolean;
  /**
   * A case-insensitive substring of the task's error message, or of a tool error's text (the result's text content
   * or the message of the error the tool threw). Sealed payloads are not searched.
   */
  errorText?: string;
  /**
   * Only failed tasks whose error gives this word as `data.outcome`: e.g. `unknown`, the gateway's calls that the
   * upstream may or may not have done (docs/gateway.md). Searched in a column kept beside the error, sealed or not.
   */
  errorOutcome?: string;
}

/** A search: filters, an order by time (newest first by default) and a keyset page. */
export interface AdminTaskQuery extends AdminTaskFilter {
  /** Which time orders the page (default created). */
  sort?: 'created' | 'updated';
  /** Default desc (newest first). */
  order?: 'asc' | 'desc';
  /** At most this many (1–500). */
  limit: number;
  /** The `next` of the previous page: an opaque string; a malformed one is an AdminQueryError. */
  cursor?: string;
}

/** One row of a search: what a list shows, without payloads. */
export interface AdminTaskSummary extends TaskHead {
  /**
   * The task's error code and message (failed tasks), never its data; but the word its data gives as `outcome`
   * (e.g. `unknown`, error-outcome.ts), when it gives one.
   */
  error: { code: number; message: string; outcome?: string } | undefined;
}

export interface AdminTaskPage {
  items: AdminTaskSummary[];
  /** The cursor of the next page; absent on the last one. */
  next?: string;
}

/** Counts for the overview. */
export interface AdminOverview {
  byStatus: Record<TaskStatus, number>;
  /** Finished tasks by outcome (`completed` and `tool_error` together are `byStatus.completed`). */
  byOutcome: Record<TaskOutcome, number>;
  /** Per tool (and version), per status. */
  byTool: { tool: string; toolVersion: string | undefined; status: TaskStatus; count: number }[];
  /**
   * For each window asked for: tasks created, completed and failed within the last `windowMs`, and of the completed
   * ones those that ended in a tool error.
   */
  windows: { windowMs: number; created: number; completed: number; failed: number; toolErrors: number }[];
  /** Unfinished tasks not updated for at least `stuckMs`. */
  stuck: number;
}

/** The outcome of an action; `not_found` also for tasks outside the operator's scope (they look absent). */
export type AdminActionResult =
  { ok: true } | { ok: false; reason: 'not_found' | 'terminal' | 'not_terminal' };

/**
 * The outcome of a retry: the id of the new task it made, or why none was made (`not_failed`: the task did not end
 * failed or in a tool error; `sealed`: its payloads are sealed with a key the store lacks, so they cannot be copied).
 */
export type AdminRetryResult =
  { ok: true; taskId: string } | { ok: false; reason: 'not_found' | 'not_failed' | 'sealed' | 'step_kept' };

/**
 * A step's value an operator has verified, kept in the new task a retry makes (TaskAdmin.retry), so that its run
 * takes the value instead of running the step: e.g. the upstream call of a gateway task whose outcome was unknown,
 * which the operator checked was done. `step_kept` when the task retried had finished that step already.
 */
export interface AdminRecordedStep {
  step: string;
  value: JsonValue;
}

/** A payload as an operator reads it: its JSON value, or `{ sealed: true }` when this process cannot open it. */
export type AdminPayload = JsonValue | { sealed: true };

/** A task's payloads (TaskAdmin.payloads): what its caller sent, what it asked and was answered, what it returned. */
export interface AdminTaskPayloads {
  /** The tool call's arguments. */
  arguments: AdminPayload;
  /** Every input request the task made and each answer given, in the order asked. */
  inputs: { key: string; request?: AdminPayload; answer?: AdminPayload }[];
  /** The task's result (completed tasks). */
  result?: AdminPayload;
}

/** A query the store refuses: a malformed cursor, a limit out of range, an unknown status. */
export class AdminQueryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdminQueryError';
  }
}

export interface TaskAdmin {
  /** Tasks within the scope matching the query, one keyset page (stable under concurrent inserts). */
  list(scope: AdminScope, query: AdminTaskQuery, now: number): Promise<AdminTaskPage>;
  /**
   * How many tasks within the scope match the filter (those `list` would page through), counting no further than
   * `max` (at most 1,000,000): one read where paging would take many. Optional: without it, a count pages `list`.
   */
  count?(scope: AdminScope, filter: AdminTaskFilter, max: number, now: number): Promise<number>;
  /** Everything kept about one task within the scope (as TaskStore.inspect), or undefined. */
  detail(scope: AdminScope, id: string, now: number): Promise<TaskInspection | undefined>;
  /**
   * The task's payloads within the scope, opened with the store's cipher, or undefined. A value sealed with a key the
   * store lacks is `{ sealed: true }`, never an error. Only the operator API's `payloads` option reads them.
   */
  payloads?(scope: AdminScope, id: string, now: number): Promise<AdminTaskPayloads | undefined>;
  /**
   * The value one of the task's steps keeps, within the scope, opened with the store's cipher (`{ sealed: true }`
   * when it does not open here), or undefined (no such task or step). For what a view derives from a step (a gateway
   * task's upstream task id), never sent whole.
   */
  stepValue?(scope: AdminScope, id: string, name: string, now: number): Promise<AdminPayload | undefined>;
  /** Requests cancellation of an unfinished task (as its owner's tasks/cancel would); `terminal` if finished. */
  cancel(scope: AdminScope, id: string, now: number): Promise<AdminActionResult>;
  /**
   * Runs a task that ended `failed` or in a tool error again from its last finished step, as a new task; the task
   * itself never changes (a finished status is final). In one transaction the new task is made: the same owner, tool
   * and version, arguments, client capabilities, TTL and poll interval, created now, runnable by any worker in its
   * fair place in line, `retryOf` the task; with a copy of the task's finished steps (values, order and timings: they
   * are not run again) and of its answered inputs (so that the replay up to the failed step finds what it read). No
   * idempotency key (the task keeps its own), no failed attempts (the failed step's policy counts afresh), no quota
   * check (an operator's act). `not_failed` for a task that is unfinished, completed without a tool error, or cancelled.
   * With `record`, the new task also keeps that step's value, as done after the others.
   */
  retry(
    scope: AdminScope,
    id: string,
    now: number,
    options?: { record?: AdminRecordedStep },
  ): Promise<AdminRetryResult>;
  /** Deletes a finished task and all it keeps; `not_terminal` while it is unfinished. */
  purge(scope: AdminScope, id: string, now: number): Promise<AdminActionResult>;
  overview(
    scope: AdminScope,
    now: number,
    options: { windowsMs: readonly number[]; stuckMs: number },
  ): Promise<AdminOverview>;
  /**
   * Pauses a tool or a concurrency key (optional, with `resume`, `pauses` and `flow`): new runs of its tasks wait
   * (working, holding no worker: a claim that finds one takes it out of the line), runs already going finish. A pause
   * of a tenant outside the scope, or of every tenant by an operator of some, is `forbidden`.
   */
  pause?(scope: AdminScope, target: PauseTarget, now: number): Promise<AdminPauseResult>;
  /**
   * Lifts a pause within the scope and makes its paused tasks runnable again, in their order, each at a new place in
   * line (a task another pause still holds is paused again when a claim finds it).
   */
  resume?(scope: AdminScope, target: PauseTarget, now: number): Promise<AdminResumeResult>;
  /** The pauses in force within the scope (those of every tenant for an operator of all), with their paused tasks. */
  pauses?(scope: AdminScope): Promise<AdminPause[]>;
  /** Concurrency keys with tasks of the scope parked for a slot, at most `max`, by key. */
  flow?(scope: AdminScope, now: number, max: number): Promise<AdminFlowKey[]>;
}

/**
 * Where a gateway task's call to its upstream stands, derived from its steps (the gateway's `dispatched` markers and
 * `upstream` answers): `not_dispatched` (nothing sent), `dispatched` (sent, no answer kept: the upstream may have
 * done it), `answered` (its answer kept), `following` (the upstream answered with a task of its own, `upstreamTaskId`).
 */
export type AdminDispatchState = 'not_dispatched' | 'dispatched' | 'answered' | 'following';

/** A gateway task's upstream call (AdminTaskUpstreamView). */
export interface AdminTaskUpstream {
  /** The upstream it went to: its URL (without credentials) or command. */
  upstream: string;
  dispatch: AdminDispatchState;
  /** The step the state was read from (e.g. `upstream`, or `dispatched@2` after an operator's retry). */
  step?: string;
  /** With `following`: the upstream's own task id. */
  upstreamTaskId?: string;
  /**
   * With `dispatched`: the step whose value an operator records once they verified what the upstream did (the answer
   * of the round sent: `TaskAdmin.retry` with `record`).
   */
  recordStep?: string;
}

/**
 * What a server that forwards calls (the gateway) says of one of its tasks' upstream call, or undefined for a task
 * that is not one; `step` reads one of the task's step values (undefined: none).
 */
export type AdminTaskUpstreamView = (
  task: TaskInspection,
  step: (name: string) => Promise<AdminPayload | undefined>,
) => Promise<AdminTaskUpstream | undefined>;

/** One part of a server's health as operators see it (the operator API's `health`): e.g. a gateway's upstream. */
export interface AdminHealthComponent {
  /** What it is, e.g. `upstream`. */
  kind: string;
  /** Which one, e.g. the upstream's URL (without credentials) or command. */
  name: string;
  /** `unknown` until it has reported anything. */
  status: 'up' | 'down' | 'unknown';
  /** When the status last changed (ms since the epoch). */
  since?: number;
  /** Calls made to it, those that failed (refused, lost, not sent), and their mean duration in ms (this process). */
  calls?: number;
  errors?: number;
  meanMs?: number;
  /** The Prometheus series that show it over time, with their labels. */
  metrics?: string[];
}
