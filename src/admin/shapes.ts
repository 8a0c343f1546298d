// The JSON the operator API answers (docs/operations.md, "Operator API"): one type per shape, which the server's views
// are checked against (`satisfies`) and its readers import (the dashboard, compiled apart, and `durable-mcp admin`).
// Types only: nothing here runs, and nothing is imported (the dashboard's build sees this file alone).

export type TaskStatusJson = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** How a finished task ended: its status, except `tool_error` for a completed task whose result is a tool error. */
export type TaskOutcomeJson = 'completed' | 'tool_error' | 'failed' | 'cancelled';

/** `GET /session`. */
export interface SessionJson {
  tenant: string;
  principal: string;
  operator: { tenants: 'all' | string[] };
  csrfToken: string;
}

/** One row of `GET /tasks` (times ISO 8601; a field without a value is left out). */
export interface TaskRowJson {
  id: string;
  tenant: string;
  principal: string;
  tool: string;
  toolVersion?: string;
  status: TaskStatusJson;
  /** Once the task has finished. */
  outcome?: TaskOutcomeJson;
  statusMessage?: string;
  createdAt: string;
  updatedAt: string;
  attempt: number;
  /** The task an operator's retry made this one from. */
  retryOf?: string;
  /**
   * A failed task's error, without its data; but the word its data gives as `outcome`, when it gives one (`unknown`:
   * a gateway call the upstream may or may not have done).
   */
  error?: { code: number; message: string; outcome?: string };
}

/** `GET /tasks`. */
export interface TaskPageJson {
  items: TaskRowJson[];
  next?: string;
}

export interface StepFailureJson {
  attempt: number;
  name: string;
  message: string;
  stack?: string;
  at: string;
  final?: boolean;
}

export interface TaskStepJson {
  name: string;
  done: boolean;
  failedAttempts: number;
  lastFailure?: StepFailureJson;
  startedAt?: string;
  savedAt?: string;
  durationMs?: number;
}

/** The error a handler threw, kept with its task. */
export interface TaskFailureJson {
  ref: string;
  name: string;
  message: string;
  stack?: string;
  step?: string;
  attempt?: number;
  at: string;
}

/** A task's payloads (only from a server that shows them: `--admin-payloads`). */
export interface TaskPayloadsJson {
  arguments?: unknown;
  inputs?: { key: string; request?: unknown; answer?: unknown }[];
  result?: unknown;
}

/** `GET /tasks/{id}`. */
export interface TaskDetailJson extends TaskRowJson, TaskPayloadsJson {
  expiresAt?: string;
  leaseOwner?: string;
  leaseUntil?: string;
  wakeAt?: string;
  cancelRequested: boolean;
  idempotencyKey?: string;
  /** The W3C trace id (32 hex digits) of the trace the task's runs join, when it keeps one. */
  traceId?: string;
  /** The tasks operators' retries made from this one, oldest first. */
  retries?: string[];
  /** Child tasks (ctx.callTool): the task whose run started this one. */
  parentId?: string;
  /** The child tasks its runs started, in creation order, the first 100 (absent: none). */
  children?: { id: string; tool: string; status: TaskStatusJson }[];
  steps: TaskStepJson[];
  /** The statuses the task took (the last 100), oldest first; absent from servers without it. */
  history?: { at: string; status: TaskStatusJson; statusMessage?: string }[];
  /** While the task waits for input: the keys of the requests still unanswered. */
  pendingInputs?: string[];
  failure?: TaskFailureJson;
  /** A gateway task's call to its upstream (only from a gateway). */
  upstream?: TaskUpstreamJson;
}

/**
 * Where a gateway task's call stands, from its steps: `not_dispatched` (nothing sent), `dispatched` (sent, no answer
 * kept: the upstream may have done it), `answered` (its answer kept), `following` (the upstream answered with a task
 * of its own, `upstreamTaskId`).
 */
export interface TaskUpstreamJson {
  upstream: string;
  dispatch: 'not_dispatched' | 'dispatched' | 'answered' | 'following';
  step?: string;
  upstreamTaskId?: string;
  /** With `dispatched`: the step a retry records the verified outcome under (`{"record":{"step",…}}`). */
  recordStep?: string;
}

/** One part of the server's health (`GET /health`), e.g. a gateway's upstream. */
export interface HealthComponentJson {
  kind: string;
  name: string;
  status: 'up' | 'down' | 'unknown';
  /** When the status last changed. */
  since?: string;
  calls?: number;
  errors?: number;
  meanMs?: number;
  /** The Prometheus series that show it over time. */
  metrics?: string[];
}

/** `GET /health`: the parts of the server's health it reports (none for a plain `serve`); not `/readyz`. */
export interface HealthJson {
  components: HealthComponentJson[];
}

/** `GET /overview`. */
export interface OverviewJson {
  byStatus: Record<TaskStatusJson, number>;
  byOutcome: Record<TaskOutcomeJson, number>;
  byTool: { tool: string; toolVersion?: string; status: TaskStatusJson; count: number }[];
  windows: { windowMs: number; created: number; completed: number; failed: number; toolErrors: number }[];
  stuck: number;
  /** For operators of every tenant: runnable tasks of tool versions this replica's code does not replay. */
  waitingForCode?: { tool: string; version: string | null; count: number }[];
}

/** The answer to a cancel or a purge. */
export interface DoneJson {
  ok: true;
}

/** The answer to a retry: the new task it made (`POST /tasks/{id}/retry`). */
export interface RetriedJson {
  ok: true;
  taskId: string;
}

/**
 * The answer to `POST /bulk/{cancel|retry|purge}`: how many tasks matched the filter (within the operator's tenants,
 * when the request ran) and, unless a dry run, how many the change was made to and why the others were left (e.g.
 * `terminal`: already finished). `limited`: the bound of one request was reached; more tasks may match.
 */
export interface BulkJson {
  dryRun?: true;
  matched: number;
  touched?: number;
  skipped?: Record<string, number>;
  limited?: true;
}

/** Every refusal. */
export interface ErrorJson {
  error: { code: string; message: string };
}

/** One message of `GET /events`. */
export type TaskEventJson = { taskId: string; task: TaskRowJson } | { taskId: string; removed: true };

/** A pause in force (`GET /pauses`, `GET /flow`): a tool or a concurrency key, of one tenant or (no tenant) all. */
export interface PauseJson {
  kind: 'tool' | 'key';
  name: string;
  tenant?: string;
  pausedAt: string;
  /** Tasks held back by it now. */
  pausedTasks: number;
}

/** `GET /pauses`. */
export interface PausesJson {
  items: PauseJson[];
}

/** A concurrency key with tasks parked for a slot (`GET /flow`), as stored (a derived key: a keyed digest). */
export interface FlowKeyJson {
  key: string;
  limit: number;
  slotsHeld: number;
  parked: number;
}

/** `GET /flow`: keys at their limit (at most `max`; `limited` when there may be more) and pauses in force. */
export interface FlowJson {
  keys: FlowKeyJson[];
  limited?: true;
  pauses: PauseJson[];
}

/** `POST /pauses`: `created` false when the same pause was in force already. */
export interface PausedJson {
  ok: true;
  created: boolean;
}

/** `DELETE /pauses`: the paused tasks made runnable again. */
export interface ResumedJson {
  ok: true;
  resumed: number;
}
