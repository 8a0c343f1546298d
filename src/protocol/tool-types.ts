// The types a tool, prompt or resource handler and its definition share: they refer to each other (a handler
// receives a context whose server control adds tools), so they live in one module that imports none of its users.
import type { TaskOwner } from '../tasks/task.js';
import type { EventResult, StepAttempt, StepOptions } from '../tasks/execution.js';
import type { MapOptions } from '../tasks/step-map.js';
import type { RequestEnvelope } from '../wire/envelope.js';
import type { RequestId } from '../wire/jsonrpc.js';
import type { LogLevel } from '../wire/meta-keys.js';
import type {
  CallToolResult,
  GetPromptResult,
  Icon,
  InputRequest,
  InputRequests,
  InputResponse,
  InputResponses,
  JsonObject,
  JsonValue,
  ResourceLink,
} from './types.js';

/** The authenticated caller: the owner of whatever its requests create. */
export type AuthInfo = TaskOwner;

/** Changes the server's lists at run time; open subscriptions are told. */
export interface ServerControl {
  addTool(tool: ToolDefinition<never>): void;
  removeTool(name: string): boolean;
  addPrompt(prompt: PromptDefinition): void;
  removePrompt(name: string): boolean;
  /** Announces a change of a list without changing it (e.g. when a tool's behaviour changed). */
  listChanged(kind: 'tools' | 'prompts' | 'resources'): void;
  /** Tells subscribers of this resource URI that its contents changed. */
  resourceUpdated(uri: string): void;
}

export interface HandlerContext {
  readonly requestId: RequestId;
  readonly method: string;
  readonly envelope: RequestEnvelope;
  readonly auth: AuthInfo;
  /** Fires when the client goes away (stream closed) or the server shuts down. */
  readonly signal: AbortSignal;
  /**
   * Sends `notifications/progress` if the request carried a progressToken; otherwise does nothing. In a task (which
   * has no progress notifications in this revision) it sets the task's statusMessage instead, e.g. "Copying (3/10)".
   */
  progress(progress: number, total?: number, message?: string): void;
  /** Sends `notifications/message` if the request asked for this level via `_meta…/logLevel`. */
  log(level: LogLevel, data: JsonValue, logger?: string): void;
  /** Returns the client's answer for `key`, or ends this round asking for it (MRTR). */
  input(key: string, request: InputRequest): InputResponse;
  /** Like `input`, for several requests asked at once. */
  inputs(requests: InputRequests): InputResponses;
  /**
   * Asks for input and waits for the answers with the run live, for input that cannot be asked again later because
   * something live waits on the answer (e.g. a server's request on an open connection): unlike `inputs`, which ends
   * the run and replays the handler with the answers, the run holds its lease and worker slot meanwhile. Only in a
   * task: the task is `input_required` with these requests, answered as any (`tasks/update`, `task_respond`) on any
   * replica, and the answers are returned by these keys. Nothing is recorded: a run replayed after a crash does not
   * get them back (keys used before are asked as `key#2`, …). `options.signal` ends the wait early (the requests are
   * withdrawn and its reason is thrown), as does the run's own signal. Outside a task it throws a TypeError.
   */
  waitForInput(requests: InputRequests, options?: { signal?: AbortSignal }): Promise<InputResponses>;
  /** The state this handler passed to `inputRequired` in the previous round, verified. */
  readonly requestState: JsonValue | undefined;
  /** Set when the handler runs as a durable task. */
  readonly taskId: string | undefined;
  /**
   * Runs `fn` until an attempt succeeds: as a task, its JSON result is then stored and a replay (after input, a
   * crash, on another replica) returns it without running `fn` again. Every run gets the value as JSON keeps it (a
   * Date as its string; nothing as null); a value JSON cannot hold (a BigInt, a cycle) fails the step. `options.retry` retries failing attempts
   * (as a task the wait between them is durable: the run ends and any process retries on time); `timeoutMs` bounds
   * each attempt. The final error is thrown. Synchronously, attempts and waits happen within the request.
   */
  step<T extends JsonValue | void>(
    name: string,
    fn: (attempt: StepAttempt) => T | Promise<T>,
    options?: StepOptions,
  ): Promise<T>;
  /**
   * Runs `fn` on each item as a step of its own, named `${name}[${index}]`, at most `options.concurrency` at once
   * (a whole number from 1 to 100; default 10), and returns the results in item order. `fn` gets the item, its index
   * and the step's attempt (its number and signal). Items must be JSON values, and everything is checked before any
   * item runs: as a task, a list whose items would take the task past its bound on steps (`maxStepsPerTask`; within a
   * request, the default bound) is refused with a TaskLimitError naming the bound. Each item is a step like any:
   * `retry` and `timeoutMs` apply to each, `stepConcurrency` makes each hold a slot of a shared key, and as a task
   * a replay returns the items kept before without running them, then runs the others. An item failing with
   * attempts left retries on its own (the items beside it keep their values); one failing for good stops new items
   * from starting, and its error is thrown once those running have settled.
   *
   * @example
   * const sizes = await ctx.map('size', urls, async (url) => (await fetch(url)).headers.get('content-length'), {
   *   concurrency: 4,
   *   retry: { maxAttempts: 3 },
   * });
   */
  map<I extends JsonValue, T extends JsonValue | void>(
    name: string,
    items: readonly I[],
    fn: (item: I, index: number, attempt: StepAttempt) => T | Promise<T>,
    options?: MapOptions,
  ): Promise<T[]>;
  /**
   * Waits `ms`. As a task the wait is durable: the run ends, no worker is held, the task stays `working` and any
   * process resumes it on time (the wake-up time is kept under `name`, so a replay does not wait again).
   */
  sleep(name: string, ms: number): Promise<void>;
  /** Waits until `at`, like `sleep`. */
  sleepUntil(name: string, at: Date | number): Promise<void>;
  /**
   * Waits for event `name` from outside the task: delivered through `callbackUrl(name)`, by the task's owner
   * (`POST /tasks/{id}/events/{name}`) or by an operator. The run ends while it waits (no worker is held) and any
   * process resumes it when the event comes; a payload delivered before the wait is kept for it. Resolves with
   * `{ received: true, payload }`, or `{ received: false, timedOut: true }` once `timeoutMs` (default 24 hours)
   * passes without it; the answer is kept under `name` (shared with steps and sleeps), so replays get it again.
   * `schema` (JSON Schema) is checked when the event is delivered: a payload that fails it is refused. Only in a
   * task; outside one it throws a TypeError.
   */
  waitForEvent<T extends JsonValue = JsonValue>(
    name: string,
    options?: { timeoutMs?: number; schema?: JsonObject },
  ): Promise<EventResult<T>>;
  /**
   * A URL that delivers event `name` to this task when POSTed a JSON payload (for webhooks): signed, unguessable,
   * valid for `expiresInMs` (default 7 days). Needs the server's public URL (`serve --public-url`); only in a task.
   */
  callbackUrl(name: string, options?: { expiresInMs?: number }): string;
  /** Sets the task's statusMessage (no effect outside a task). */
  status(message: string): Promise<void>;
  /**
   * Whether to take the code path introduced under `id` (a new version of the tool's logic): true for a new task,
   * false for a task in flight that recorded its history with the code from before, which keeps its old path on
   * every replay. Always true outside a task. Put the check where the paths part, and keep it until such tasks end.
   */
  patched(id: string): Promise<boolean>;
  /**
   * The writer of the task's stream `name` (1 to 100 letters, digits, `.`, `_`, `-`): partial results clients read
   * while the task runs, as the resource `durable-mcp://tasks/{taskId}/streams/{name}` (docs/durable-execution.md,
   * "Streaming partial results"). Outside a task its appends go nowhere and it links to nothing.
   */
  stream(name: string): StreamWriter;
  /**
   * Calls tool `name` of this server (a gateway's mirrored tools included) as a child task, owned by this task's
   * owner and counted against its quotas, and returns its result. Only in a task: the run ends waiting, holding no
   * worker, and the task is due again as soon as the child ends, on any replica. Durable and exactly once: the child's
   * id comes from this task's and the call's name, so a replay finds the child an earlier run started, and its
   * outcome is kept among the task's records (`@child/<name>`), so later replays do not read it again. A child that
   * failed, was cancelled or expired throws ChildTaskFailedError; one a quota refused throws ChildTaskRefusedError
   * at once. Cancelling this task cancels its children, unless `options.detached`. Outside a task it throws a
   * TypeError.
   */
  callTool(name: string, args?: JsonObject, options?: CallToolOptions): Promise<CallToolResult>;
  /** The server's registry, for tools that change what the server offers. */
  readonly server: ServerControl;
  /** Ends this round with an InputRequiredResult carrying these requests and state. */
  inputRequired(options: { inputRequests?: InputRequests; state?: JsonValue }): never;
}

/** A writer of one of the task's streams (HandlerContext.stream). */
export interface StreamWriter {
  readonly name: string;
  /** The stream's resource URI; undefined outside a task. */
  readonly uri: string | undefined;
  /**
   * Appends a chunk of text, durably: resolved once it is stored, at the next offset of the stream. Safe to replay:
   * the k-th append of the handler's code (or of an attempt of a step's body) is stored once, however many runs make
   * it. Past the task's bounds on its streams (limits.maxStreamChunksPerTask, maxStreamBytesPerTask) it throws a
   * TaskLimitError, never retried. Outside a task it does nothing.
   */
  append(chunk: string): Promise<void>;
  /** Content blocks that link to the stream, for the result: one `resource_link` in a task, none outside. */
  links(): ResourceLink[];
}

/** HandlerContext.callTool's options. */
export interface CallToolOptions {
  /**
   * The call's name among the task's records (default: the tool's name): its child is kept as `@child/<name>`, and
   * every call of a task needs its own (calls of one tool in a loop: `resize-${i}`). 1 to 200 characters.
   */
  name?: string;
  /** Cancelling this task leaves the child running (default: the child is cancelled with it). */
  detached?: boolean;
}

/** An input a tool can declare it asks for (ToolDefinition.asks): a method, and for elicitation its mode. */
export type ToolInputMethod =
  'elicitation/create' | 'elicitation/create:url' | 'sampling/createMessage' | 'roots/list';

/** How a tool relates to the tasks extension. */
export interface TaskPolicy {
  /** `never`: always synchronous. `optional`: a task when the client declares the extension. `required`: only as a task. */
  support: 'never' | 'optional' | 'required';
  /** Default time to live in ms from creation; null for unlimited. */
  ttlMs?: number | null;
  /** Suggested polling interval in ms. */
  pollIntervalMs?: number;
  /** When false, a task interrupted by a crash ends `failed` instead of being replayed. Default true. */
  replayAfterCrash?: boolean;
  /** Payloads of this tool's tasks are encrypted at rest when the store has a key (even in `sensitive` mode). */
  sensitive?: boolean;
  /**
   * Runs synchronously on the tools/call itself, before the task exists: input it asks for (`ctx.input`) is
   * gathered with MRTR rounds, and the answers are handed to the task's handler.
   */
  prepare?: (args: JsonObject, ctx: HandlerContext) => void | Promise<void>;
  /**
   * How clients that do not declare the tasks extension call this tool (see docs/any-client.md): the call waits
   * up to a budget for the task, then hands back its id and the facade tools that follow it. `false` turns it
   * off. Unset: on for `optional` tools when the server's fallback is on; off for `required` ones, which answer
   * -32021 to such clients as the extension demands, unless `true` (or an object) opts in.
   */
  fallback?: boolean | { budgetMs?: number };
  /**
   * At most `limit` of this tool's tasks run at once, across every replica on the store: counted in the store when
   * a task is claimed. A slot is held only while a run executes (a task sleeping, in retry back-off or waiting for
   * input holds none) unless `hold: 'task'`; a task that finds its key full waits, `working`, without holding a worker, until a slot frees.
   * `key` (default: the tool's name) shares one limit between tools. Calls that run within their request (a `never`
   * tool, a synchronous call) hold a slot of the key too while their handler runs: they wait for one up to the
   * server's `tasks.slotWaitMs`, then are refused with a server-busy error (JSON-RPC 429).
   */
  concurrency?: TaskConcurrency;
  /**
   * At most `limit` of this tool's tasks start per `periodMs`, spaced evenly (one every periodMs / limit), across
   * every replica on the store. Only first runs count: a task resumed after a sleep, a retry back-off or input, or
   * taken over after a crash, does not. A task over the rate waits, `working`, without holding a worker, for the
   * start reserved for it. Checked before `concurrency`. Synchronous calls are not counted.
   */
  rateLimit?: TaskRateLimit;
  /**
   * The task's priority among its caller's tasks (a whole number from -100 to 100; default 0), or a function
   * computing it from the call's arguments and caller when the task is created. When it is the caller's turn in the
   * fair line, its waiting task of the highest priority runs first: priorities reorder a caller's own tasks, never
   * the turns between callers. Where the server allows it (`allowCallerPriority`), the caller's
   * `_meta["dev.durable-mcp/priority"]` replaces it.
   */
  priority?: number | ((args: JsonObject, owner: AuthInfo) => number);
  /**
   * Calls of one caller with the same key within `periodMs` of the first make one task, which starts when that
   * window ends: a later call with equal arguments joins it; with other arguments it is refused as an idempotency
   * conflict (-32602) unless `replace` (the pending task then takes its arguments, and its status says so). Once the
   * task started, the next call opens a new window. The result's `_meta["dev.durable-mcp/debounce"]` tells the
   * caller whether it `joined` a task and whether it `replaced` its arguments.
   */
  debounce?: TaskDebounce;
}

/** TaskPolicy.debounce. */
export interface TaskDebounce {
  /**
   * The key calls are debounced by (1 to 200 printable characters), per caller and tool: never shared between
   * callers. A function computes it from the call's arguments and caller (one window per repository, say); a key
   * computed so is stored as a keyed digest, never in clear, when the task's payloads are encrypted.
   */
  key: string | ((args: JsonObject, owner: AuthInfo) => string);
  /** The window from the first call, in ms (1 to 86,400,000). */
  periodMs: number;
  /** A later call with other arguments replaces the pending task's arguments instead of being refused. */
  replace?: boolean;
}

/** TaskPolicy.concurrency. */
export interface TaskConcurrency {
  /** Runs at once (a whole number from 1). */
  limit: number;
  /**
   * The key the limit counts under (1 to 200 printable characters; default: the tool's name). A function computes it
   * from the call's arguments and caller when the task is created (one limit per customer, say); a key computed so
   * is stored as a keyed digest, never in clear, when the task's payloads are encrypted.
   */
  key?: string | ((args: JsonObject, owner: AuthInfo) => string);
  /**
   * How long a task holds its slot: `'run'` (default) only while a run executes; `'task'` from its first run until it
   * ends (completed, failed, cancelled, expired or purged), through its sleeps, retry back-offs and waits for input:
   * one deploy per environment, start to end.
   */
  hold?: 'run' | 'task';
}

/** TaskPolicy.rateLimit. */
export interface TaskRateLimit {
  /** Starts per period (a whole number from 1 to 1,000,000). */
  limit: number;
  /** The period (a whole number of ms from 1 to 86,400,000, a day). */
  periodMs: number;
  /**
   * The key the limit counts under (1 to 200 printable characters; default: the tool's name). A function computes it
   * from the call's arguments and caller when the task is created; a key computed so is stored as a keyed digest,
   * never in clear, when the task's payloads are encrypted.
   */
  key?: string | ((args: JsonObject, owner: AuthInfo) => string);
}

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/**
 * Defaults for `ctx.step` calls (a server-wide layer, a tool's layer, then the step's own options; later layers win,
 * retry policies field by field). The built-in default is one attempt and no timeout.
 */
export type StepDefaults = StepOptions;

export interface ToolDefinition<Args = JsonObject> {
  name: string;
  title?: string;
  description?: string;
  /** JSON Schema (2020-12 by default) for `arguments`; defaults to an empty object schema. */
  inputSchema?: JsonObject;
  outputSchema?: JsonObject;
  annotations?: ToolAnnotations;
  icons?: Icon[];
  _meta?: JsonObject;
  task?: TaskPolicy;
  /**
   * The version of this tool's code (any short text, e.g. "2"): each task records the version that created it, and
   * a replay that leaves its recorded history names it. Change it when a change would not replay tasks in flight.
   */
  version?: string;
  /**
   * Earlier versions whose tasks this code replays as well (their recorded steps are still asked in the same order).
   * A process claims only tasks of versions its code replays: during a rolling deploy, tasks of other versions wait
   * for a process that runs theirs (reported in metrics and logs). Tasks recorded without a version run anywhere.
   */
  compatibleVersions?: string[];
  /**
   * The input its handler (and its task policy's `prepare`) may ask the caller for with `ctx.input`:
   * `elicitation/create` (form mode), `elicitation/create:url` (url mode), `sampling/createMessage`, `roots/list`.
   * A call from a client that lacks a capability one of these needs is refused before anything runs or any task is
   * created (-32021, `data.requiredCapabilities` naming what is missing), unless the call is handed back to a client
   * without the tasks extension (the facade tools answer any input). The handler may then ask only for what is listed:
   * anything else fails where it is asked, naming it. Unset: nothing is checked at call time, and an input the client
   * cannot answer fails where it is asked (as a task, the task fails then, after the steps before it ran).
   */
  asks?: readonly ToolInputMethod[];
  /** Defaults for this tool's steps (retry policy, timeout of each attempt). */
  steps?: StepDefaults;
  /**
   * What callers see of an error the handler throws (a tool execution error, `isError: true`): its message
   * (`public`, the default) or a generic text with a reference (`private`). Operators see everything either way.
   */
  errors?: 'public' | 'private';
  handler: (args: Args, ctx: HandlerContext) => CallToolResult | Promise<CallToolResult>;
}

export interface PromptArgument {
  name: string;
  title?: string;
  description?: string;
  required?: boolean;
}

export type Completer = (value: string, context: Record<string, string>) => string[] | Promise<string[]>;

export interface PromptDefinition {
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgument[];
  icons?: Icon[];
  /** Completion providers keyed by argument name. */
  complete?: Record<string, Completer>;
  handler: (args: Record<string, string>, ctx: HandlerContext) => GetPromptResult | Promise<GetPromptResult>;
}
