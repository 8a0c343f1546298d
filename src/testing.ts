// Public entry of `durable-mcp/testing`: a tool author's test kit. It runs tools as durable tasks in this process,
// on a throwaway SQLite store and a manual clock, through the same protocol, store and replay code as a server:
// call a tool as a task (with an idempotency key, as a client retrying would), run what can run, move time through
// sleeps, retry backoffs, step timeouts and TTLs (settle fails rather than hangs on a run only the clock can move),
// answer input, cancel, crash a run after its Nth step or inside a step's body and watch another run replay it, count
// how often each step's body ran, and replay a task's recorded history against new code to catch non-determinism.
// Concurrency limits and priorities hold as on a server: the kit claims through the same store.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StepDefaults } from './protocol/define.js';
import type { ToolDefinition } from './protocol/tool-types.js';
import { createTaskRunner } from './protocol/tasks/runner.js';
import { createMcpServer, type McpServer } from './protocol/server.js';
import { createTasksExtension, taskDefaultsOf } from './protocol/tasks/extension.js';
import { childStarter } from './protocol/tasks/child-tasks.js';
import { VERSION } from './version.js';
import { createSqliteTaskStore } from './stores/sqlite/task-store.js';
import { createManualClock, type ManualClock } from './tasks/manual-clock.js';
import type { JsonObject, JsonValue } from './tasks/task.js';
import { createCallbackTokens } from './tasks/callback-tokens.js';
import type { EventDeliveryResult } from './tasks/events.js';
import { eventSender, KIT_PUBLIC_URL, postCallback, type Send } from './testing-events.js';

export { KIT_PUBLIC_URL };
import { resolveTaskLimits, storedBytesLimitOf, type TaskLimits } from './tasks/limits.js';
import { countingRunner, recordingStore, type Crashes, type Recorded } from './testing-store.js';
import { KIT_OWNER, replayHistory, type ReplayReport, type TaskHistory } from './testing-replay.js';
import { settleAll, stopFlights, type SettleOptions, type SettleParts } from './testing-settle.js';
import { createRunWatch } from './testing-watch.js';
import {
  LATEST_PROTOCOL_VERSION,
  META_CLIENT_CAPABILITIES,
  META_IDEMPOTENCY_KEY,
  META_PRIORITY,
  META_PROTOCOL_VERSION,
  META_STREAM,
  TASKS_EXTENSION,
} from './wire/meta-keys.js';
import { streamUri } from './wire/stream-uri.js';

export { createManualClock, type ManualClock } from './tasks/manual-clock.js';
export type { ReplayReport, TaskHistory } from './testing-replay.js';
export { BlockedOnClockError, type SettleOptions } from './testing-settle.js';

const DEFAULT_CAPS: JsonObject = { elicitation: {}, sampling: {}, roots: {} };

export interface TestKitOptions {
  /** The tools under test. */
  tools: ToolDefinition<never>[];
  /** The clock's start (epoch ms; default 2026-01-01). */
  start?: number;
  /** Defaults of every tool's steps, as the server's `steps` option. */
  steps?: StepDefaults;
  /** The calling client's capabilities (the tasks extension is always declared; default: elicitation, sampling, roots). */
  clientCapabilities?: JsonObject;
  /** Lease length of runs (default 30 s): a crashed run's task is taken over once the clock passes it. */
  leaseMs?: number;
  /** Bounds on what one task may store, as the server's `limits` option (default DEFAULT_TASK_LIMITS). */
  limits?: Partial<TaskLimits>;
  /**
   * Runs at once, as a worker's `concurrency` (a whole number from 1 to 64; default 1: one run at a time). With more,
   * settle claims further tasks while runs are in flight, as a server's free workers do: a task whose concurrency key
   * (`task.concurrency`) is full then waits, saying `Waiting for a free slot of concurrency key "…" to run.`, and runs
   * once a slot frees.
   */
  concurrency?: number;
  /** Honours `StartOptions.priority`, as `serve --allow-caller-priority` does the caller's priority (default false). */
  allowCallerPriority?: boolean;
}

/** A task as its client sees it (`tasks/get`): status, message, outstanding input, result or error. */
export type TaskView = JsonObject & { status: string; taskId: string };

export interface TestTask {
  readonly id: string;
  /** `tasks/get`, as the client sees the task. */
  get(): Promise<TaskView>;
  /** `tasks/update` with these answers, keyed by input key. */
  answer(responses: Record<string, JsonObject>): Promise<void>;
  /** `tasks/cancel`. */
  cancel(): Promise<void>;
  /**
   * Delivers event `name` with `payload` to the task as its owner does (`POST /tasks/{id}/events/{name}`): checked
   * against the schema its wait registered, kept when it does not wait yet. Run what it woke with `kit.settle()`.
   */
  sendEvent(name: string, payload: JsonValue): Promise<EventDeliveryResult>;
  /** How many times each step's body ran so far (retries and replays after a crash included). */
  stepRuns(): Record<string, number>;
  /** What the task recorded so far, to replay against other code (kit.replay) or keep as a fixture. */
  history(): TaskHistory;
  /**
   * The chunks of the task's stream `name` (ctx.stream) from offset `from` (default 0), read as its client reads them
   * (`resources/read` of `durable-mcp://tasks/{taskId}/streams/{name}?offset=N`, page after page).
   */
  stream(name: string, from?: number): Promise<StreamRead>;
}

/** What `TestTask.stream` read: the chunks' text, the offset to read from next, and whether the stream is over. */
export interface StreamRead {
  chunks: string[];
  nextOffset: number;
  /** The task ended and every chunk was read: nothing more will come. */
  ended: boolean;
}

/** How `kit.start` calls the tool. */
export interface StartOptions {
  /** Answers to MRTR rounds of the tool's `prepare`, before the task is created. */
  inputResponses?: Record<string, JsonObject>;
  /**
   * The idempotency key a client sends (`_meta["dev.durable-mcp/idempotencyKey"]`, 1 to 255 characters): a second
   * start with the key gets the same task, one with the key and other arguments is refused (invalid params).
   */
  idempotencyKey?: string;
  /**
   * The caller's priority (`_meta["dev.durable-mcp/priority"]`, a whole number from -100 to 100): it replaces the
   * tool's `task.priority` when the kit allows it (`allowCallerPriority`), and is ignored otherwise, as on a server.
   */
  priority?: number;
}

export interface TestKit {
  /** The kit's manual clock: it moves only when the test moves it (`advance`, `recover`, `settle({ advance })`). */
  readonly clock: ManualClock;
  readonly leaseMs: number;
  /** Calls a tool as a client that declares the tasks extension (see StartOptions). */
  start(tool: string, args?: JsonObject, options?: StartOptions): Promise<TestTask>;
  /**
   * A handle on a task of the kit by its id: one a tool's handler started as a child task (`ctx.callTool`), whose id
   * `tasks/get` of its parent shows under `_meta["dev.durable-mcp/childTasks"]`.
   */
  task(id: string): TestTask;
  /**
   * Runs every task that can run now, one run at a time, until none can (those waiting for time or input stay).
   * A run that waits on nothing but the manual clock (a step attempt's `timeoutMs`, a timer of `kit.clock`) would
   * wait for ever: settle rejects with BlockedOnClockError instead, leaving the run in flight for the test to move
   * the clock (`kit.advance(ms)`). With `{ advance: true }` it moves the clock to the next timer instead, each time
   * nothing can run, firing it: through step timeouts, sleeps and retry backoffs, up to `maxAdvances` moves.
   * "Nothing but the clock" means: the run's handler and step bodies hold no timer, socket, I/O request or other
   * resource they opened themselves (a step waiting on a connection opened before the kit's runs holds none).
   */
  settle(options?: SettleOptions): Promise<void>;
  /** Moves the clock forward (firing timers on the way) and runs what falls due, as `settle()` does. */
  advance(ms: number): Promise<void>;
  /**
   * The next run (of `taskId`, or of any task) stops as if its process died, right after its `n`th step is stored:
   * nothing after it is written and its lease stays. `recover()` moves past the lease and lets another run replay.
   */
  crashAfterStep(n: number, taskId?: string): void;
  /**
   * The next run (of `taskId`, or of any task) that starts the body of step `name` dies as if its process was killed
   * while that body runs: the body has started (its side effects may have happened; `stepRuns()` counts it), its
   * result is never stored, nothing after it is written and the lease stays. The body's signal fires and its outcome
   * goes nowhere. `recover()` lets another run take over: the step is not stored, so its body runs again.
   */
  crashDuringStep(name: string, taskId?: string): void;
  /** Moves the clock past the lease and runs what can run, as `settle()` does: the takeover after a crash. */
  recover(): Promise<void>;
  /** Delivers an event to task `taskId` as its owner does (as TestTask.sendEvent). */
  sendEvent(taskId: string, name: string, payload: JsonValue): Promise<EventDeliveryResult>;
  /**
   * Delivers `payload` through a callback URL a tool made with `ctx.callbackUrl` (the kit's public URL is
   * `http://test-kit.invalid`), as `POST /callbacks/{token}` does: a forged or expired URL is refused as there.
   */
  postCallback(
    url: string,
    payload: JsonValue,
  ): Promise<EventDeliveryResult | { ok: false; reason: 'forged' | 'expired' }>;
  /** Replays a recorded history against the kit's tools, running no step body. */
  replay(history: TaskHistory): Promise<ReplayReport>;
  /** Stops the runs in flight (as a shutdown would) and deletes the kit's store. */
  close(): Promise<void>;
}

type Call = ReturnType<typeof callerOf>;

/** The kit's parts: a throwaway store that records, the server core, the counting runner and the client's calls. */
function assemble(options: TestKitOptions) {
  const limits = resolveTaskLimits(options.limits);
  const width = options.concurrency ?? 1;
  if (!(Number.isInteger(width) && width >= 1 && width <= 64))
    throw new RangeError('createTestKit: concurrency must be a whole number from 1 to 64');
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-kit-'));
  const watch = createRunWatch();
  const clock = watchedClock(createManualClock(options.start ?? Date.UTC(2026, 0, 1)), watch.poke);
  const recorded = new Map<string, Recorded>();
  const crashes: Crashes = { armed: undefined, during: undefined, dead: new Set(), runs: new Map() };
  const store = recordingStore(createSqliteTaskStore({ path: join(dir, 'tasks.db') }), recorded, crashes);
  const now = (): number => clock.now();
  const tasks = {
    store,
    now,
    tasksGetRate: false as const,
    fallback: false as const,
    allowCallerPriority: options.allowCallerPriority === true,
  };
  const server = createMcpServer({
    info: { name: 'durable-mcp-test-kit', version: VERSION },
    toolSets: [{ tools: options.tools }],
    consumeOnce: (key, expiresAt) => store.consumeOnce(key, expiresAt),
    now,
    steps: options.steps,
    maxStepBytes: limits.maxStepBytes,
    extensions: [createTasksExtension(tasks)],
  });
  const tokens = createCallbackTokens(randomBytes(32));
  const runner = countingRunner(
    createTaskRunner(server.registry, server.info, {
      steps: options.steps,
      maxResultBytes: limits.maxResultBytes,
      // ctx.callTool: child tasks run in the kit as any task does (settle runs them).
      children: childStarter(server.registry, { store, now, defaults: taskDefaultsOf(tasks) }),
      events: { publicUrl: KIT_PUBLIC_URL, tokens },
    }),
    recorded,
    crashes,
  );
  const caps = { ...(options.clientCapabilities ?? DEFAULT_CAPS), extensions: { [TASKS_EXTENSION]: {} } };
  const leaseMs = options.leaseMs ?? 30_000;
  const settling: SettleParts = {
    store,
    runner,
    crashes,
    clock,
    leaseMs,
    limits,
    // The server's default byte quota, as its creations have it.
    storedBytesLimit: storedBytesLimitOf(undefined),
    watch,
    flights: new Set(),
    width,
  };
  const send = eventSender(store, clock);
  return { dir, recorded, caps, settling, call: callerOf(server, caps), send, tokens };
}

/** The manual clock, telling the watch when a timer is set on it (a run may now wait on that alone). */
function watchedClock(clock: ManualClock, poke: () => void): ManualClock {
  return {
    ...clock,
    setTimer(fn, ms) {
      const cancel = clock.setTimer(fn, ms);
      poke();
      return cancel;
    },
  };
}

function taskHandle(call: Call, recorded: Map<string, Recorded>, send: Send, id: string): TestTask {
  return {
    id,
    sendEvent: (name, payload) => send(id, name, payload, { owner: KIT_OWNER }),
    get: async () => (await call('tasks/get', { taskId: id })) as TaskView,
    answer: async (responses) => void (await call('tasks/update', { taskId: id, inputResponses: responses })),
    cancel: async () => void (await call('tasks/cancel', { taskId: id })),
    stepRuns: () => ({ ...(recorded.get(id)?.runs ?? {}) }),
    stream: (name, from = 0) => readStream(call, id, name, from),
    history: () => {
      const h = recorded.get(id);
      if (h === undefined) throw new Error(`no task ${id} in this kit`);
      const { runs: _runs, ...history } = h;
      return structuredClone(history);
    },
  };
}

/** The most pages `TestTask.stream` reads in one call. */
const MAX_STREAM_PAGES = 1_000;

async function readStream(call: Call, id: string, name: string, from: number): Promise<StreamRead> {
  const chunks: string[] = [];
  let offset = from;
  for (let page = 0; page < MAX_STREAM_PAGES; page++) {
    const result = await call('resources/read', { uri: streamUri(id, name, offset) });
    const contents = Array.isArray(result.contents) ? (result.contents as JsonObject[]) : [];
    for (const c of contents) chunks.push(String(c.text));
    const meta = (result._meta as JsonObject | undefined)?.[META_STREAM] as
      { nextOffset: number; length: number; ended: boolean } | undefined;
    if (meta === undefined) throw new Error(`stream ${name} of task ${id}: no ${META_STREAM} in the result`);
    offset = meta.nextOffset;
    if (meta.ended || offset >= meta.length) return { chunks, nextOffset: offset, ended: meta.ended };
  }
  throw new Error(`stream ${name} of task ${id}: more than ${MAX_STREAM_PAGES} pages`);
}

/** tools/call as a task, answering MRTR rounds before creation with `inputResponses`. */
async function startTask(call: Call, tool: string, args: JsonObject, options: StartOptions): Promise<string> {
  const { inputResponses, idempotencyKey, priority } = options;
  const meta: JsonObject = {
    ...(idempotencyKey === undefined ? {} : { [META_IDEMPOTENCY_KEY]: idempotencyKey }),
    ...(priority === undefined ? {} : { [META_PRIORITY]: priority }),
  };
  let params: JsonObject = { name: tool, arguments: args };
  for (let round = 0; round < 16; round++) {
    const result = await call('tools/call', params, meta);
    if (result.resultType === 'task') return String(result.taskId);
    if (result.resultType !== 'input_required' || inputResponses === undefined)
      throw new Error(`start ${tool}: not a task: ${JSON.stringify(result)}`);
    params = { name: tool, arguments: args, inputResponses };
    if (result.requestState !== undefined) params.requestState = result.requestState;
  }
  throw new Error(`start ${tool}: still asking for input after 16 rounds`);
}

export async function createTestKit(options: TestKitOptions): Promise<TestKit> {
  const { dir, recorded, caps, settling, call, send, tokens } = assemble(options);
  const { clock, leaseMs, crashes, store, runner, watch } = settling;
  const settle = (settleOptions?: SettleOptions): Promise<void> => settleAll(settling, settleOptions);
  return {
    clock,
    leaseMs,
    async start(tool, args = {}, startOptions = {}) {
      return taskHandle(call, recorded, send, await startTask(call, tool, args, startOptions));
    },
    task: (id) => taskHandle(call, recorded, send, id),
    settle,
    async advance(ms) {
      clock.advance(ms);
      await settle();
    },
    crashAfterStep(n, taskId) {
      if (!(Number.isInteger(n) && n >= 1)) throw new RangeError('crashAfterStep: n must be an integer >= 1');
      crashes.armed = { after: n, taskId };
    },
    crashDuringStep(name, taskId) {
      if (typeof name !== 'string' || name === '')
        throw new RangeError('crashDuringStep: name must be a step name');
      crashes.during = { step: name, taskId };
    },
    async recover() {
      clock.advance(leaseMs + 1);
      await settle();
    },
    sendEvent: (taskId, name, payload) => send(taskId, name, payload, { owner: KIT_OWNER }),
    postCallback: (url, payload) => postCallback(send, tokens, clock, url, payload),
    replay: (history) => replayHistory(runner, clock, caps, history),
    async close() {
      try {
        await stopFlights(settling);
      } finally {
        watch.close();
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** In-process JSON-RPC calls as the kit's client: the tasks extension and the given capabilities declared. */
function callerOf(server: McpServer, caps: JsonObject) {
  let nextId = 1;
  return async (method: string, params: JsonObject, extraMeta: JsonObject = {}): Promise<JsonObject> => {
    const meta = {
      ...extraMeta,
      [META_PROTOCOL_VERSION]: LATEST_PROTOCOL_VERSION,
      [META_CLIENT_CAPABILITIES]: caps,
    };
    const outcome = await server.dispatch({
      request: { kind: 'request', id: nextId++, method, params: { ...params, _meta: meta } },
      auth: KIT_OWNER,
      signal: new AbortController().signal,
      header: undefined,
      emit: () => undefined,
    });
    if (!outcome.ok) throw outcome.error;
    return outcome.result;
  };
}
