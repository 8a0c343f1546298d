// A task created by tools/call: follow it to the end (push, polling while no stream is open), answer its input,
// cancel it.
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import { InputRequiredError } from './errors.js';
import type { InputHandler, TaskClient } from './task-client.js';
import { listenToTask, resubscribeAfterMs, STREAM_LIVED_MS } from './task-stream.js';
import { delay } from './wait.js';
import { backoffCeilingMs } from '../pacing/backoff.js';

export type { InputHandler, TaskClient } from './task-client.js';

export type TaskOutcome =
  | { status: 'completed'; result: JsonObject; task: JsonObject }
  | { status: 'failed'; error: { code: number; message: string; data?: unknown }; task: JsonObject }
  | { status: 'cancelled'; task: JsonObject };

export interface FollowOptions {
  signal?: AbortSignal;
  /** Called with every DetailedTask seen (pushed or polled). */
  onUpdate?: (task: JsonObject) => void;
  /** Use polling only (no subscriptions/listen). */
  poll?: boolean;
  /** Answers input requests of this task (defaults to the client's handler). */
  onInput?: InputHandler;
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** What the app's call that created a task said, as far as the client knows it. */
export interface CallDetails {
  /** The label the app gave the call (`CallOptions.label`). */
  label?: string;
  /** The call's arguments (on a resumed handle, while the journal keeps them: until the task ends). */
  args?: JsonObject;
}

/** One follow of a task: its outcome or failure once known, and the updates still being handled. */
interface Follow {
  outcome?: TaskOutcome;
  failure?: unknown;
  chain: Promise<void>;
  /** Aborted when following ends: the task ended, handling an update failed, or the caller stopped. */
  stop: AbortController;
  /** Hands an update (pushed or polled) to the handling chain, in order. */
  enqueue(task: JsonObject): void;
  /** Waits for the updates in hand, then tells whether following is over. */
  settled(): Promise<boolean>;
}

export class TaskHandle {
  private readonly answered = new Set<string>();
  /** The label the app gave the call that created the task, when known (see {@link CallDetails}). */
  readonly label?: string;
  /** The arguments of the call that created the task, when known. */
  readonly args?: JsonObject;

  constructor(
    private readonly client: TaskClient,
    readonly taskId: string,
    readonly tool?: string,
    call: CallDetails = {},
  ) {
    if (call.label !== undefined) this.label = call.label;
    if (call.args !== undefined) this.args = call.args;
  }

  get(): Promise<JsonObject> {
    return this.client.request('tasks/get', { taskId: this.taskId });
  }

  async cancel(): Promise<void> {
    await this.client.request('tasks/cancel', { taskId: this.taskId });
  }

  async answer(responses: Record<string, JsonObject>): Promise<void> {
    await this.client.request('tasks/update', { taskId: this.taskId, inputResponses: responses });
    for (const key of Object.keys(responses)) this.answered.add(key);
  }

  /**
   * Follows the task until it ends; input requests go to the input handler (each key answered once).
   *
   * By push while the server offers it (`subscriptions/listen`). When a stream ends before the task does (the server
   * closing or restarting, a balancer's cut), the task is read at once, polled while no stream is open, and
   * subscribed to again after a back-off (250 ms doubling to 10 s, with jitter; back to 250 ms after a stream that
   * lived 10 s). A server without push for the task is polled to the end.
   */
  async result(options: FollowOptions = {}): Promise<TaskOutcome> {
    const follow = this.startFollow(options);
    // One listener on the caller's signal for the whole follow, removed when it ends: waits listen to `stop`.
    const forward = (): void => follow.stop.abort(options.signal?.reason);
    if (options.signal?.aborted === true) forward();
    else options.signal?.addEventListener('abort', forward, { once: true });
    try {
      if (options.poll !== true) await this.followByPush(follow);
      while (!(await follow.settled())) await this.pollOnce(follow);
    } catch (err) {
      // A request cut short because following ended is not a failure of its own.
      if (!follow.stop.signal.aborted) throw err;
    } finally {
      options.signal?.removeEventListener('abort', forward);
    }
    await follow.settled();
    if (follow.failure !== undefined) throw follow.failure;
    if (follow.outcome === undefined) throw options.signal?.reason ?? new Error('stopped following the task');
    return follow.outcome;
  }

  private startFollow(options: FollowOptions): Follow {
    const onInput = options.onInput ?? this.client.onInput;
    const follow: Follow = {
      chain: Promise.resolve(),
      stop: new AbortController(),
      enqueue: (task) => {
        follow.chain = follow.chain
          .then(() => this.onUpdate(follow, task, options, onInput))
          .catch((err: unknown) => {
            follow.failure ??= err;
            follow.stop.abort();
          });
      },
      settled: async () => {
        await follow.chain;
        return follow.outcome !== undefined || follow.failure !== undefined || follow.stop.signal.aborted;
      },
    };
    return follow;
  }

  /** One update of the task: reported, journaled, and its new input requests answered. */
  private async onUpdate(
    follow: Follow,
    task: JsonObject,
    options: FollowOptions,
    onInput: InputHandler | undefined,
  ): Promise<void> {
    if (follow.outcome !== undefined || follow.failure !== undefined) return;
    options.onUpdate?.(task);
    const status = String(task.status);
    this.client.journalUpdate(this.taskId, status);
    if (TERMINAL.has(status)) {
      follow.outcome = toOutcome(task);
      follow.stop.abort();
      return;
    }
    if (status !== 'input_required' || !isJsonObject(task.inputRequests)) return;
    const fresh = Object.fromEntries(
      Object.entries(task.inputRequests).filter(([key]) => !this.answered.has(key)),
    ) as Record<string, JsonObject>;
    if (Object.keys(fresh).length === 0) return;
    if (onInput === undefined) throw new InputRequiredError(fresh, this.taskId);
    for (const key of Object.keys(fresh)) this.answered.add(key);
    const answers = await onInput(fresh, { taskId: this.taskId, tool: this.tool });
    await this.client.request('tasks/update', { taskId: this.taskId, inputResponses: answers });
  }

  /**
   * Push for as long as the server offers it for this task: after each stream that ends, one tasks/get at once (so
   * no update of the gap is missed), polls until the back-off (or the stream's `retry`, when longer) has passed, then
   * a new stream. Returns when following
   * is over, or when the server has no push for the task (polling then goes on).
   */
  private async followByPush(follow: Follow): Promise<void> {
    const { signal } = follow.stop;
    let failures = 0;
    for (;;) {
      const end = await listenToTask(this.client, this.taskId, follow.enqueue, signal);
      if ((await follow.settled()) || end.kind === 'unsupported') return;
      if ((end.openMs ?? 0) >= STREAM_LIVED_MS) failures = 0;
      const until = Date.now() + resubscribeAfterMs(end, failures++);
      do await this.pollOnce(follow, until);
      while (!(await follow.settled()) && Date.now() < until);
      if (await follow.settled()) return;
    }
  }

  private lastPoll: string | undefined;
  private unchanged = 0;

  /** One tasks/get, then the wait before the next (cut short at `until`, when given). */
  private async pollOnce(follow: Follow, until?: number): Promise<void> {
    const { signal } = follow.stop;
    const task = await this.client.request('tasks/get', { taskId: this.taskId }, { signal });
    const { _meta: _m, resultType: _r, ...detailed } = task;
    follow.enqueue(detailed);
    const key = JSON.stringify(detailed);
    this.unchanged = key === this.lastPoll ? this.unchanged + 1 : 0;
    this.lastPoll = key;
    if (TERMINAL.has(String(task.status))) return;
    // Honour the server's interval, back off while nothing changes, and add jitter so pollers spread out.
    const base =
      typeof task.pollIntervalMs === 'number' && task.pollIntervalMs > 0 ? task.pollIntervalMs : 1_000;
    const wait = backoffCeilingMs(Math.min(this.unchanged, 4), base, Math.max(base, 30_000));
    const jittered = wait * (0.9 + Math.random() * 0.2);
    await delay(until === undefined ? jittered : Math.max(0, Math.min(jittered, until - Date.now())), signal);
  }
}

function toOutcome(task: JsonObject): TaskOutcome {
  switch (task.status) {
    case 'completed':
      return { status: 'completed', result: (task.result as JsonObject) ?? {}, task };
    case 'failed':
      return { status: 'failed', error: task.error as { code: number; message: string }, task };
    default:
      return { status: 'cancelled', task };
  }
}
