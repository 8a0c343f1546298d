// What a task run sees of the runtime (steps, waits, status, cancellation), and the runner the protocol layer provides.
import { concurrencyProblem } from './concurrency.js';
import { bytesOver, TaskLimitError } from './limits.js';
import { NonRetryableError, retryPolicyProblem, type RetryPolicy } from './retry.js';
import type { ClaimedTask, JsonObject, JsonValue, RunOutcome, TaskError, TaskProgress } from './task.js';

/** What one attempt of a step gets. */
export interface StepAttempt {
  /** Fires when the run stops (cancel, lease lost, shutdown) or this attempt's timeout passes. */
  readonly signal: AbortSignal;
  /** 1 for the first attempt; counts across runs and processes. */
  readonly attempt: number;
}

export interface StepOptions {
  /** How often and how patiently to retry a failing attempt (merged over the tool's and the server's defaults). */
  retry?: RetryPolicy;
  /** Each attempt's time bound: its signal fires, it counts as failed, and a result arriving later is dropped. */
  timeoutMs?: number;
  /**
   * A resource several tools share (e.g. `{ key: 'payments', limit: 25 }`): while the step's body runs it holds a
   * slot of `key`, counted in the store across replicas with the slots tasks of that key hold. When the key is full
   * the step waits: briefly in process, then the run ends and the task waits durably, trying again later.
   */
  concurrency?: StepConcurrency;
}

/** StepOptions.concurrency: a key (1 to 200 printable characters) and how many may hold a slot of it at once. */
export interface StepConcurrency {
  key: string;
  limit: number;
}

/**
 * What a step's result is kept as, and what every run gets back, its first run included, so a replay sees exactly
 * what the first run saw: the value through JSON, with nothing (undefined, as from a step that only has side
 * effects) kept as null. A value JSON cannot hold (a BigInt, a cycle, a function), or whose JSON text is more than
 * `maxBytes` (TaskLimits.maxStepBytes), fails the step for good, naming it.
 */
export function keptStepValue(name: string, value: unknown, maxBytes = Infinity): JsonValue {
  if (value === undefined) return null;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new NonRetryableError(`step "${name}" returned a value JSON cannot hold (${why})`, { cause: err });
  }
  if (text === undefined)
    throw new NonRetryableError(`step "${name}" returned a ${typeof value}, which JSON cannot hold`);
  const bytes = bytesOver(text, maxBytes);
  if (bytes !== undefined)
    throw new TaskLimitError(
      `step "${name}" returned ${bytes} bytes of JSON, over the limit for a step's value`,
      'maxStepBytes',
      maxBytes,
    );
  return JSON.parse(text) as JsonValue;
}

/** The latest time a Date can hold (ms after the epoch): no wake-up can be later. */
const LATEST_TIME = 8.64e15;

/** The length of sleep `name` (from `now`), checked: a number of ms of at least 0 whose end a Date can hold. */
export function checkedMs(name: string, ms: number, now: number): number {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)
    throw new TypeError(`sleep "${name}": ms must be a number of at least 0`);
  if (now + ms > LATEST_TIME)
    throw new RangeError(`sleep "${name}": ${ms} ms would end past the latest time a date can hold`);
  return ms;
}

/** The end of sleepUntil `name` (a Date or ms after the epoch), checked. */
export function checkedTime(name: string, at: Date | number): number {
  const t = Number(at);
  if (!Number.isFinite(t) || Math.abs(t) > LATEST_TIME)
    throw new TypeError(`sleepUntil "${name}": not a valid date`);
  return t;
}

/** A status message, checked: a string (a value of another type is a mistake the store must not meet). */
export function checkedStatus(message: unknown): string {
  if (typeof message !== 'string')
    throw new TypeError(
      `status: the message must be a string, not ${message === null ? 'null' : typeof message}`,
    );
  return message;
}

/** Progress as `ctx.progress` takes it, checked: finite numbers (JSON and the wire hold no other), a string message. */
export function checkedProgress(progress: unknown, total: unknown, message: unknown): TaskProgress {
  const finite = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n);
  if (!finite(progress)) throw new TypeError('progress: the progress must be a finite number');
  if (total !== undefined && !finite(total))
    throw new TypeError('progress: the total must be a finite number (or left out)');
  if (message !== undefined && typeof message !== 'string')
    throw new TypeError('progress: the message must be a string (or left out)');
  return total === undefined ? { progress } : { progress, total };
}

/** Step options from several layers (server, tool, step): later ones win, retry policies field by field. */
export function mergeStepOptions(...layers: (StepOptions | undefined)[]): StepOptions {
  const out: StepOptions = {};
  for (const layer of layers) {
    if (layer === undefined) continue;
    if (layer.retry !== undefined) out.retry = { ...out.retry, ...definedFields(layer.retry) };
    if (layer.timeoutMs !== undefined) out.timeoutMs = layer.timeoutMs;
    if (layer.concurrency !== undefined) out.concurrency = layer.concurrency;
  }
  return out;
}

/** What is wrong with step options (naming the field), or undefined. */
export function stepOptionsProblem(options: StepOptions): string | undefined {
  const { timeoutMs } = options;
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0))
    return 'timeoutMs must be a number greater than 0';
  const limited = options.concurrency === undefined ? undefined : stepConcurrencyProblem(options.concurrency);
  if (limited !== undefined) return `concurrency: ${limited}`;
  return options.retry === undefined ? undefined : retryPolicyProblem(options.retry);
}

function stepConcurrencyProblem(c: StepConcurrency): string | undefined {
  if (typeof c !== 'object' || c === null) return 'must be an object { key, limit }';
  if (typeof c.key !== 'string') return 'key must be a string';
  return concurrencyProblem(c.limit, c.key);
}

const definedFields = <T extends object>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

export interface ExecutionContext {
  /** Fires when the task is cancelled, its lease is lost, or the server shuts down. */
  readonly signal: AbortSignal;
  /**
   * Runs `fn` until one attempt succeeds, then never again for the task's life: later runs get the stored result.
   * A failed attempt with attempts left ends the run; the task waits in the store and any process retries it.
   */
  step<T extends JsonValue | void>(
    name: string,
    fn: (attempt: StepAttempt) => T | Promise<T>,
    options?: StepOptions,
  ): Promise<T>;
  /** Resolves once `at` has passed; until then the run ends and the task waits in the store. `at` is kept under `name`. */
  sleepUntil(name: string, at: number): Promise<void>;
  /**
   * Updates the task's statusMessage; not while the run replays recorded history (steps it recorded remain ahead of
   * it): that run showed its messages already, and showing them again would take watchers back.
   */
  status(message: string): Promise<void>;
  /**
   * Shows progress: `message` becomes the task's statusMessage, and `progress` the progress kept with the task
   * (TaskSnapshot.progress). Best effort and coalesced: while a write is in flight only the latest waits for the
   * next. Never behind what watchers were shown, across replays, processes and crashes (worker/progress.ts).
   */
  progress(progress: TaskProgress, message: string): void;
  /**
   * Whether this task takes the code path introduced under `id`: true for a task that reaches this point past its
   * recorded history (a new task, or one whose history holds nothing beyond), false for one replaying a history
   * recorded by code without the path. The answer is kept with the task, so every later run gets the same one.
   */
  patched(id: string): Promise<boolean>;
  /**
   * Before ctx.map runs its items as steps named `names`: which of them the task kept already (in that order), so a
   * replay returns those before it runs any other. Throws a TaskLimitError, before any item runs, when the others
   * would take the task past its bound on steps (TaskLimits.maxStepsPerTask). Optional: without it, nothing is kept
   * and nothing counted.
   */
  planSteps?(what: string, names: readonly string[]): readonly boolean[];
  /**
   * Asks for input while the run stays live (optional: the worker's runs have it when the store offers
   * LiveInputPort), and resolves with the answers once every request is answered, by the keys given. The task is
   * `input_required` with the requests, the run keeps its lease and its worker slot, and the answers come from
   * whichever process received them. Nothing is recorded for a replay: it is for input that cannot be asked again
   * because something live waits on it. `signal` (and the run's own) ends the wait: the requests still unanswered are
   * withdrawn, the task is `working` again, and the signal's reason is thrown. A key the task used before is asked
   * as `key#2` (or the next number free).
   */
  waitForInput?(
    requests: Record<string, JsonObject>,
    statusMessage: string,
    signal?: AbortSignal,
  ): Promise<Record<string, JsonObject>>;
  /**
   * Appends `chunk` to stream `stream` of the task and resolves with its offset (optional: the worker's runs have it
   * when the store offers TaskStreamsPort). Each append is named by where the run's code makes it: the k-th append
   * to the stream from the handler's own code, or from attempt n of step s, keeps its name across runs, and an
   * append whose name the stream holds (a replay after a crash) writes nothing and resolves with the offset it has.
   * Throws a TaskLimitError past the task's bounds on its streams.
   */
  appendChunk?(stream: string, chunk: string): Promise<number>;
  /**
   * Waits for child task `name` of this task (ctx.callTool), starting it first unless it exists: `start` is given the
   * child's id (derived from this task's id and `name`, so a run replayed after a crash finds the child an earlier
   * run started instead of starting another) and creates it with this task as its parent, or says why it may not
   * (a quota). While the child is unfinished the run ends waiting, holding no worker, until the child's ending makes
   * the task due (the store does it in the ending's own write). The child's outcome is then kept under
   * `@child/<name>` among the task's records, so that later runs get it without reading the child again.
   */
  child(name: string, start: (childId: string) => Promise<ChildStart>): Promise<ChildOutcome>;
  /**
   * Waits for event `name` from outside the task (optional: the worker's runs have it when the store offers
   * OutsideEventPort). The run ends waiting (no worker is held) until the event is delivered or `until` passes; a
   * replay gets the kept answer. `schema` is registered with the wait (deliveries that fail it are refused); `check`
   * checks a payload delivered before the wait began (a problem is thrown).
   */
  waitForEvent?(name: string, options: EventWaitOptions): Promise<EventResult>;
  /** The run's clock. */
  now(): number;
}

/** How `start` of ExecutionContext.child ended: the child created (or found), or refused before it existed. */
export type ChildStart = { started: true } | { started: false; error: TaskError };

/** A child task's ending as its parent keeps it (ExecutionContext.child). */
export type ChildOutcome =
  | { taskId: string; status: 'completed'; result: JsonObject }
  | { taskId: string; status: 'failed'; error: TaskError }
  | { taskId: string; status: 'cancelled' | 'expired' }
  /** Never created: `start` refused it (a quota); `taskId` is the id it would have had. */
  | { taskId: string; status: 'refused'; error: TaskError };

/** The prefix of the records under which a task keeps its children's outcomes (ExecutionContext.child). */
export const CHILD_PREFIX = '@child/';

/** What `ctx.waitForEvent` answers: the event's payload, or that the wait timed out without it. */
export type EventResult<T = JsonValue> = { received: true; payload: T } | { received: false; timedOut: true };

export interface EventWaitOptions {
  /** When the wait times out (kept by the first run that waits: replays keep it). */
  until: number;
  /** The JSON Schema the payload must match, checked when it is delivered. */
  schema?: JsonObject;
  /** Checks a payload delivered before the wait began (its schema was not known then): a problem, or undefined. */
  check?: (payload: JsonValue) => string | undefined;
}

/** Runs (or replays) the handler of a claimed task and says how the run ended. */
export type TaskRunner = (task: ClaimedTask, exec: ExecutionContext) => Promise<RunOutcome>;

/**
 * Errors that steer a run rather than report a failure (a lost lease, a wait, a request for input): a step never
 * counts them as a failed attempt and the runner never shows them as a tool error.
 */
export interface ControlFlow {
  readonly controlFlow: true;
}

export const isControlFlow = (err: unknown): err is ControlFlow =>
  typeof err === 'object' && err !== null && (err as Partial<ControlFlow>).controlFlow === true;

/** Thrown by `step` when the lease was lost: the run must stop without writing anything else. */
export class LeaseLostError extends Error implements ControlFlow {
  readonly controlFlow = true;
  constructor(taskId: string) {
    super(`lease lost on task ${taskId}`);
    this.name = 'LeaseLostError';
  }
}

/** Thrown by `step` (between attempts) and `sleepUntil`: the run ends and the task waits until `until`. */
export class WaitPending extends Error implements ControlFlow {
  readonly controlFlow = true;
  constructor(
    readonly until: number,
    readonly statusMessage: string,
  ) {
    super(statusMessage);
    this.name = 'WaitPending';
  }
}

/** A step (or sleep) name used a second time in one run: each call needs a name of its own. */
export class StepNameReusedError extends Error {
  constructor(readonly step: string) {
    super(
      `step "${step}" was already used in this run: each ctx.step and ctx.sleep needs its own name ` +
        `(in a loop, number them: ctx.step(\`${step}:\${i}\`, …))`,
    );
    this.name = 'StepNameReusedError';
  }
}

/** The names a run used so far: a second use of one is refused (StepNameReusedError). */
export function useStepName(used: Set<string>, name: string): void {
  if (used.has(name)) throw new StepNameReusedError(name);
  used.add(name);
}

/**
 * A replay that left its recorded history: the code asked for a step the history does not have while recorded
 * steps were still to come, so the code changed under the task in flight. The run starts nothing new and the task
 * ends failed (whatever the handler does with the error).
 */
export class NonDeterminismError extends Error implements ControlFlow {
  readonly controlFlow = true;
  constructor(
    readonly tool: string,
    readonly toolVersion: string | undefined,
    readonly expected: string,
    readonly actual: string,
  ) {
    const version = toolVersion === undefined ? '' : ` (version ${toolVersion})`;
    super(
      `Non-determinism: tool "${tool}"${version} asked for step "${actual}" while its history's next step is ` +
        `"${expected}". The tool's code changed under this task; nothing new ran. Keep step names and order for ` +
        `tasks in flight, branch with ctx.patched(), or give the tool a new version.`,
    );
    this.name = 'NonDeterminismError';
  }
}

/** An attempt that outlived its step's `timeoutMs`. */
export class StepTimeoutError extends Error {
  constructor(step: string, timeoutMs: number) {
    super(`step "${step}" timed out after ${timeoutMs} ms`);
    this.name = 'StepTimeoutError';
  }
}

/** A step's final failure replayed from the store (the original error object lived in an earlier run). */
export class StepFailedError extends Error {
  constructor(name: string, message: string, stack?: string) {
    super(message);
    this.name = name;
    if (stack !== undefined) this.stack = stack;
  }
}

/** How much of an error's name, message and stack is kept (characters each): they are stored with the task. */
export const ERROR_TEXT_MAX = 16_384;

const clipped = (text: string): string =>
  text.length <= ERROR_TEXT_MAX
    ? text
    : `${text.slice(0, ERROR_TEXT_MAX)}… (${text.length - ERROR_TEXT_MAX} more characters)`;

/** The name, message and stack of anything thrown (a non-Error becomes its string form), each clipped. */
export function errorParts(err: unknown): { name: string; message: string; stack?: string } {
  const e = err instanceof Error ? err : undefined;
  const parts: { name: string; message: string; stack?: string } = {
    name: clipped(e?.name ?? typeof err),
    message: clipped(e?.message ?? String(err)),
  };
  if (e?.stack !== undefined) parts.stack = clipped(e.stack);
  return parts;
}

const origins = new WeakMap<object, { step: string; attempt: number }>();

/** Marks an error as the final failure of a step, so the task's kept error says where it came from. */
export function markStepError(err: unknown, step: string, attempt: number): void {
  if (typeof err === 'object' && err !== null && !origins.has(err)) origins.set(err, { step, attempt });
}

/** The step (and attempt) an error was the final failure of, if any. */
export const stepErrorOrigin = (err: unknown): { step: string; attempt: number } | undefined =>
  typeof err === 'object' && err !== null ? origins.get(err) : undefined;
