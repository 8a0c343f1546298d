// A task created by tools/call: follow it to the end (push with polling fallback), answer its input, cancel it.
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import { InputRequiredError } from './errors.js';
import { delay } from './wait.js';

export type TaskOutcome =
  | { status: 'completed'; result: JsonObject; task: JsonObject }
  | { status: 'failed'; error: { code: number; message: string; data?: unknown }; task: JsonObject }
  | { status: 'cancelled'; task: JsonObject };

export type InputHandler = (
  requests: Record<string, JsonObject>,
  context: { tool?: string; taskId?: string },
) => Promise<Record<string, JsonObject>> | Record<string, JsonObject>;

/** What a handle needs from its client. */
export interface TaskClient {
  request(
    method: string,
    params: JsonObject,
    options?: { signal?: AbortSignal; onNotification?: (m: JsonObject) => void },
  ): Promise<JsonObject>;
  onInput: InputHandler | undefined;
  journalUpdate(taskId: string, status: string): void;
}

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

export class TaskHandle {
  private readonly answered = new Set<string>();

  constructor(
    private readonly client: TaskClient,
    readonly taskId: string,
    readonly tool?: string,
  ) {}

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

  /** Follows the task until it ends; input requests go to the input handler (each key answered once). */
  async result(options: FollowOptions = {}): Promise<TaskOutcome> {
    const onInput = options.onInput ?? this.client.onInput;
    let outcome: TaskOutcome | undefined;
    let failure: unknown;
    let chain = Promise.resolve();
    const stop = new AbortController();
    // One listener on the caller's signal for the whole follow, removed when it ends: waits listen to `stop`.
    const forward = (): void => stop.abort(options.signal?.reason);
    if (options.signal?.aborted === true) forward();
    else options.signal?.addEventListener('abort', forward, { once: true });

    const handle = async (task: JsonObject): Promise<void> => {
      if (outcome !== undefined || failure !== undefined) return;
      options.onUpdate?.(task);
      const status = String(task.status);
      this.client.journalUpdate(this.taskId, status);
      if (TERMINAL.has(status)) {
        outcome = toOutcome(task);
        stop.abort();
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
    };
    const enqueue = (task: JsonObject): void => {
      chain = chain
        .then(() => handle(task))
        .catch((err: unknown) => {
          failure ??= err;
          stop.abort();
        });
    };

    try {
      if (options.poll !== true) await this.push(enqueue, stop.signal);
      await chain;
      while (outcome === undefined && failure === undefined && !stop.signal.aborted) {
        await this.pollOnce(enqueue, stop.signal);
        await chain;
      }
    } finally {
      options.signal?.removeEventListener('abort', forward);
    }
    if (failure !== undefined) throw failure;
    if (outcome === undefined) throw options.signal?.reason ?? new Error('stopped following the task');
    return outcome;
  }

  /** Push: subscriptions/listen with this task id; returns when the stream ends for any reason. */
  private async push(enqueue: (task: JsonObject) => void, signal: AbortSignal): Promise<void> {
    const listen = new AbortController();
    const stop = (): void => listen.abort();
    signal.addEventListener('abort', stop, { once: true });
    try {
      await this.client.request(
        'subscriptions/listen',
        { notifications: { taskIds: [this.taskId] } },
        {
          signal: listen.signal,
          onNotification: (m) => {
            const params = isJsonObject(m.params) ? m.params : undefined;
            if (m.method === 'notifications/subscriptions/acknowledged') {
              const ids = isJsonObject(params?.notifications) ? params.notifications.taskIds : undefined;
              // Not acknowledged (unknown, foreign or expired): polling will report why.
              if (!Array.isArray(ids) || !ids.includes(this.taskId)) listen.abort();
            } else if (m.method === 'notifications/tasks' && params?.taskId === this.taskId) {
              const { _meta: _ignored, ...task } = params;
              enqueue(task);
            }
          },
        },
      );
    } catch {
      // No push for tasks here, or the stream broke: the caller falls back to polling.
    } finally {
      signal.removeEventListener('abort', stop);
    }
  }

  private lastPoll: string | undefined;
  private unchanged = 0;

  private async pollOnce(enqueue: (task: JsonObject) => void, signal: AbortSignal): Promise<void> {
    const task = await this.get();
    const { _meta: _m, resultType: _r, ...detailed } = task;
    enqueue(detailed);
    const key = JSON.stringify(detailed);
    this.unchanged = key === this.lastPoll ? this.unchanged + 1 : 0;
    this.lastPoll = key;
    if (TERMINAL.has(String(task.status))) return;
    // Honour the server's interval, back off while nothing changes, and add jitter so pollers spread out.
    const base =
      typeof task.pollIntervalMs === 'number' && task.pollIntervalMs > 0 ? task.pollIntervalMs : 1_000;
    const wait = Math.min(base * 2 ** Math.min(this.unchanged, 4), Math.max(base, 30_000));
    await delay(wait * (0.9 + Math.random() * 0.2), signal);
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
