// The task domain model: statuses, the stored record, and what a run produces.

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
/** Every status, in the order of a task's life. */
export const TASK_STATUSES: readonly TaskStatus[] = [
  'working',
  'input_required',
  'completed',
  'failed',
  'cancelled',
];
export type TerminalStatus = 'completed' | 'failed' | 'cancelled';
export const TERMINAL_STATUSES: readonly TerminalStatus[] = ['completed', 'failed', 'cancelled'];
/** Whether a status is final: a task in it never changes again (whatever the value's source, wire or row). */
export const isTerminal = (status: unknown): status is TerminalStatus =>
  status === 'completed' || status === 'failed' || status === 'cancelled';

/**
 * How a finished task ended, for operators: its terminal status, except that a completed task whose result is a tool
 * error (`isError: true`, e.g. a handler that threw) is `tool_error`. The MCP status stays `completed` for those.
 */
export type TaskOutcome = 'completed' | 'tool_error' | 'failed' | 'cancelled';
export const TASK_OUTCOMES: readonly TaskOutcome[] = ['completed', 'tool_error', 'failed', 'cancelled'];

/** The outcome of a task in `status` whose result is (`toolError`) or is not a tool error; undefined until it ends. */
export function outcomeOf(status: TaskStatus, toolError: boolean): TaskOutcome | undefined {
  if (!isTerminal(status)) return undefined;
  return status === 'completed' && toolError ? 'tool_error' : status;
}

import type { JsonObject, JsonValue } from '../json.js';
import type { TraceContext } from './trace-context.js';

export type { JsonObject, JsonValue };

export interface TaskOwner {
  tenant: string;
  principal: string;
}

/** The owner part of a caller (an AuthInfo, a row): exactly its tenant and principal. */
export const ownerOf = (who: TaskOwner): TaskOwner => ({ tenant: who.tenant, principal: who.principal });

/** One string per owner, for maps and limiters keyed by owner (NUL cannot occur in either part on the wire). */
export const ownerKey = (owner: TaskOwner): string => `${owner.tenant}\u0000${owner.principal}`;

export interface TaskError {
  code: number;
  message: string;
  data?: unknown;
}

/** The error of a task that outlived its TTL unfinished (the TTL sweep of every store writes it). */

/** Progress a handler reported with `ctx.progress`: how far, and out of how much when it said. */
export interface TaskProgress {
  progress: number;
  total?: number;
}

/** A task as its owner sees it (what tasks/get and notifications/tasks are built from). */
export interface TaskSnapshot {
  id: string;
  status: TaskStatus;
  statusMessage: string | undefined;
  createdAt: number;
  updatedAt: number;
  ttlMs: number | null;
  pollIntervalMs: number | undefined;
  /** Outstanding input requests, keyed by their lifetime-unique keys (only while input_required). */
  inputRequests: Record<string, JsonObject>;
  result: JsonObject | undefined;
  error: TaskError | undefined;
  /**
   * The progress its handler last showed (`ctx.progress`), never on the wire as a field: a call that waits on the
   * task sends it as `notifications/progress`. Absent while none was shown (or from a store that keeps none).
   */
  progress?: TaskProgress;
  /**
   * Store-internal, never on the wire: grows with every write of the task, so that snapshots reaching a process
   * by different paths (a read, a change feed) can be put in commit order. Set by stores whose change feed carries
   * snapshots (PostgreSQL); absent where every snapshot is a read serialised with the writes (SQLite).
   */
  revision?: number;
  /**
   * Set only on what create() answers for a task with a debounce key (NewTask.debounce), never on the wire as a
   * field: `joined` when the call joined a pending task with equal arguments, `replaced` when it gave a pending task
   * its arguments; absent when it created the task.
   */
  debounced?: 'joined' | 'replaced';
  /** Child tasks (`get` sets them; never wire fields): the task whose run started it; whether it started any. */
  parentId?: string;
  hasChildren?: boolean;
}

export interface NewTask {
  id: string;
  owner: TaskOwner;
  tool: string;
  /** The version of the tool's code creating the task (see ToolDefinition.version). */
  toolVersion?: string;
  args: JsonObject;
  createdAt: number;
  ttlMs: number | null;
  pollIntervalMs: number | undefined;
  statusMessage: string | undefined;
  replayAfterCrash: boolean;
  /** Client capabilities of the creating request: input requests must stay within them. */
  clientCapabilities: JsonObject;
  /** Answers gathered before creation (MRTR rounds), usable by the run like any other answer. */
  answers: Record<string, JsonObject>;
  /** The tool is marked sensitive: its payloads are encrypted at rest when the store has a key. */
  sensitive?: boolean;
  /**
   * The caller's idempotency key: while a task of the same owner and tool with this key lives (until its TTL ends),
   * creating another returns that task instead (same arguments) or fails with IdempotencyConflictError.
   */
  idempotencyKey?: string;
  /**
   * Refuse the task (ActiveLimitError) when its owner already has this many unfinished tasks, counted atomically
   * with the insert, whatever other processes create at the same moment. A call whose idempotency key names a
   * live task of the owner still gets that task.
   */
  activeLimit?: number;
  /**
   * Refuse the task (ActiveLimitError, quota `stored`) when its owner already keeps this many tasks of any status
   * (finished ones count until they are swept), counted as activeLimit is.
   */
  storedLimit?: number;
  /** The same limits for the owner's whole tenant, all its principals together (quotas `tenant-…`). */
  tenantLimits?: { active?: number; stored?: number };
  /**
   * Refuse the task (ActiveLimitError, quota `stored-bytes`) when the bytes its owner's kept tasks store (TaskStore
   * storedBytes), with this task's arguments and answers, would be more than this.
   */
  storedBytesLimit?: number;
  /**
   * At most `limit` runs of tasks with this `key` at once, across every process on the store (TaskPolicy.concurrency):
   * a claim that finds the key full parks the task until a slot frees.
   */
  concurrency?: ConcurrencyLimit;
  /**
   * At most `limit` first runs of tasks with this `key` start per `periodMs`, across every process on the store
   * (TaskPolicy.rateLimit): a claim that finds the key over its rate reserves the task's start and lets it wait.
   */
  rateLimit?: RateLimit;
  /**
   * The task's priority among its owner's tasks (TaskPolicy.priority, or the caller's where the server allows it): an
   * integer in PRIORITY_RANGE, default 0. When it is its owner's turn in line, the owner's waiting task of the highest
   * priority is claimed (at one priority, the first in line): priorities reorder an owner's own tasks, never the
   * turns between owners.
   */
  priority?: number;
  /**
   * Debounce (TaskPolicy.debounce): while a task of the same owner and tool with this key is pending (created less
   * than its `periodMs` ago and not started), creating another joins it (equal arguments, compared as JSON), gives
   * it these arguments (`replace`) or fails with DebounceConflictError. Otherwise the new task holds the key and does
   * not start before `createdAt + periodMs`, as a durable wait would end. An idempotency key naming a live task
   * decides first.
   */
  debounce?: DebounceKey;
  /**
   * The trace the task's runs join (tasks/trace-context.ts): the span of the creating request, or the caller's
   * `traceparent`; each run's span is its child, on whichever process runs it.
   */
  trace?: TraceContext;
  /** The task whose run started it (ctx.callTool): its ending ends the parent's wait; cancelled with it unless detached. */
  parent?: { id: string; detached?: boolean };
}

/** A debounce key as a task carries it (NewTask.debounce). */
export interface DebounceKey {
  key: string;
  /** The window from the first call, in ms. */
  periodMs: number;
  /** A later call with other arguments replaces the pending task's arguments instead of being refused. */
  replace?: boolean;
  /** Computed from the call: kept as a keyed digest when the task's payloads are sealed (as ConcurrencyLimit's). */
  derived?: boolean;
}

/** The priorities a task may have (NewTask.priority): integers from min to max. */
export const PRIORITY_RANGE = { min: -100, max: 100 } as const;

/** A concurrency limit as a task carries it: its key (in clear: a static name) and how many runs it allows at once. */
export interface ConcurrencyLimit {
  key: string;
  limit: number;
  /**
   * The key was computed from the call (its arguments or caller): a store that encrypts the task's payloads keeps a
   * keyed digest of it instead (PayloadSealing.concurrencyKey).
   */
  derived?: boolean;
  /**
   * 'task': the slot is held from the task's first run until it ends (a sleep, a retry back-off or a wait for input
   * keeps it), not only while a run executes.
   */
  hold?: 'task';
}

/**
 * A rate limit as a task carries it: its key (in clear: a static name), and how many first runs of the key's tasks
 * start per period, spaced evenly (one every periodMs / limit).
 */
export interface RateLimit {
  key: string;
  limit: number;
  periodMs: number;
  /** The key was computed from the call: a store that encrypts the task's payloads keeps a keyed digest of it. */
  derived?: boolean;
}

/** One failed attempt of a step, kept for operators (sealed with the task's payloads). */
export interface StepFailure {
  /** 1-based attempt number. */
  attempt: number;
  name: string;
  message: string;
  stack?: string;
  at: number;
  /** No attempt follows this one (attempts used up, or the error is not retryable). */
  final?: boolean;
}

/** An error a tool's handler (or one of its steps) threw, kept with the task for operators. */
export interface TaskFailure {
  /** The reference shown to the caller (also with private errors), to find this record and the log line. */
  ref: string;
  name: string;
  message: string;
  stack?: string;
  /** The step the error came from, and the attempt of that step. */
  step?: string;
  attempt?: number;
  at: number;
}

/** Failed attempts of a step that has no result yet (or had failed attempts before it got one). */
export interface StepAttempts {
  /** How many attempts failed. */
  failed: number;
  last: StepFailure;
}

/** What a worker gets when it claims a task: everything needed to (re)run the handler. */
export interface ClaimedTask {
  id: string;
  owner: TaskOwner;
  tool: string;
  args: JsonObject;
  /** The version of the tool's code that created the task (undefined: none declared, or before versions). */
  toolVersion: string | undefined;
  /** Fencing token: every write of this run is conditional on it. */
  token: number;
  /** True when the previous holder's lease expired mid-run (a crash), not a clean hand-over. */
  takenOver: boolean;
  replayAfterCrash: boolean;
  cancelRequested: boolean;
  clientCapabilities: JsonObject;
  steps: Record<string, JsonValue>;
  /** The names of `steps` in the order they were done (steps done before that was recorded come first, by name). */
  stepOrder: string[];
  /** Failed attempts per step, for steps that had any. */
  stepAttempts: Record<string, StepAttempts>;
  answers: Record<string, JsonObject>;
  /** Keys ever asked during this task's life (answered or not). */
  askedKeys: string[];
  /** The progress shown last, by any run (absent: none yet): a replay shows nothing behind it. */
  progress?: TaskProgress;
  /** The trace the task's runs join (NewTask.trace; absent: none kept). */
  trace?: TraceContext;
}

/** How a run ended. `failure` keeps an error the tool threw (a completed isError result, or a failed task). */
export type RunOutcome =
  | { kind: 'completed'; result: JsonObject; statusMessage?: string; failure?: TaskFailure }
  | { kind: 'failed'; error: TaskError; statusMessage: string; failure?: TaskFailure }
  | { kind: 'input_required'; requests: Record<string, JsonObject>; statusMessage?: string }
  /** The task stays `working` without a lease or a worker until `until` (a step's retry backoff, a sleep). */
  | { kind: 'waiting'; until: number; statusMessage: string }
  | { kind: 'cancelled' }
  | { kind: 'released' };

/** Whether a CallToolResult reports a tool error (what stores keep beside the result, which may be sealed). */
export const isToolErrorResult = (result: JsonObject): boolean => result.isError === true;

/** What every operator view of a task starts with: a search row, an inspection. */
export interface TaskHead {
  id: string;
  owner: TaskOwner;
  tool: string;
  /** The tool version the task was created with (when the tool set declares one). */
  toolVersion: string | undefined;
  status: TaskStatus;
  /** How the task ended (undefined while it is unfinished). */
  outcome: TaskOutcome | undefined;
  statusMessage: string | undefined;
  createdAt: number;
  updatedAt: number;
  /** Runs so far (the fencing token of the latest). */
  attempt: number;
  /** The task an operator's retry made this one from (TaskAdmin.retry). */
  retryOf: string | undefined;
}

/** One status a task took (TaskInspection.history). */
export interface TaskStatusChange {
  at: number;
  status: TaskStatus;
  /** The status message it came with (absent: none set by that change). */
  statusMessage?: string;
}

/**
 * The status message of a runnable task that no process claimed for a while, found by a process whose code cannot
 * continue it (another version of its tool, ClaimScope): it waits for a process that runs its version (one that is
 * busy, or a deployment still to come).
 */
export const versionWaitMessage = (tool: string, version: string): string =>
  `Waiting for a server running version ${version} of ${tool} to continue this task.`;

/**
 * The status message a working task shows while it waits for a free slot of its concurrency key (parked by a claim
 * that found the key at its limit).
 */
export const slotWaitMessage = (key: string): string =>
  `Waiting for a free slot of concurrency key "${key}" to run.`;

/**
 * The status message a working task shows while it waits for the start a claim reserved for it under the rate
 * limit of its key.
 */
export const rateWaitMessage = (key: string): string =>
  `Waiting for the rate limit of key "${key}" to start.`;

/** The status message of a task whose last outstanding input was just answered (it is working again). */
export const RESUMED_STATUS_MESSAGE = 'Input received; the task is in progress.';
/** What a task whose run waited for live input says once that run's process is gone (LiveInputPort.revive). */
export const LIVE_INPUT_LAPSED_MESSAGE =
  'The server that asked for this input stopped; the task goes on elsewhere.';

/** Why a lookup found nothing usable. Foreign, purged and never-existing ids are all `not_found`. */
export type LookupMiss = 'not_found' | 'expired';

/** What the owner is told of a miss: the same words whoever asked and whatever the id. */
export const LOOKUP_MISS_MESSAGES: Readonly<Record<LookupMiss, string>> = {
  not_found: 'Task not found',
  expired: 'Task has expired',
};
