// The tasks of a 2025-11-25 upstream (`params.task`, tasks/get, tasks/result, tasks/cancel, as the official SDK v1 has
// them). When the gateway's call is itself a task and the upstream allows one for the tool, the session's call asks for
// a task; its CreateTaskResult is handed back naming the session it belongs to (an SDK v1 server keeps a task for the
// session that created it, and answers "not found" on any other), so that the recorded answer is all a later run
// needs: the same session while it is open in this process, or, over HTTP, a client on the recorded Mcp-Session-Id
// (the SDK's client skips initialize on a transport that has one) after the gateway restarted. A stdio upstream's
// tasks end with its child process: once the session that created one has closed, it cannot be followed.
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ErrorCode,
  GetTaskPayloadResultSchema,
  McpError,
  RELATED_TASK_META_KEY,
  ResultSchema,
  TaskStatusNotificationSchema,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { delay } from '../client/wait.js';
import type { CallToolResult, JsonObject } from '../protocol/types.js';
import { isJsonObject } from '../wire/jsonrpc.js';
import { TASKS_EXTENSION } from '../wire/meta-keys.js';
import { VERSION } from '../version.js';
import { upstreamFetch } from './authorized-fetch.js';
import { linkedFetch } from './linked-fetch.js';
import {
  errorMessage,
  readAgainLater,
  UpstreamTaskLostError,
  type UpstreamAnswer,
  type UpstreamCallOptions,
  type UpstreamFollowOptions,
  type UpstreamOptions,
  type UpstreamTarget,
  type UpstreamTaskCreated,
  type UpstreamTaskOutcome,
} from './upstream.js';

/** How long the upstream is asked to keep a task (from its creation, as the SDK's InMemoryTaskStore counts it). */
export const UPSTREAM_TASK_TTL_MS = 24 * 60 * 60 * 1000;

/** The bounds put on the upstream's pollInterval between two tasks/get. */
export const POLL_MIN_MS = 100;
export const POLL_MAX_MS = 30_000;

/** The sessions of one upstream open in this process, by an id of their own, and the task statuses they push. */
export interface SessionTasks {
  /** Registers an open session (`sessionId`: its Mcp-Session-Id over HTTP) and listens to its task statuses. */
  add(client: Client, sessionId: string | undefined): void;
  remove(client: Client): void;
  /** What a task created on `client`'s session records of it. */
  refOf(client: Client): { connection?: string; sessionId?: string };
  /** The open session a task was created on, if it is still open in this process. */
  find(connection: string | undefined): Client | undefined;
  /** Waits `ms`, or less when the upstream pushes a status of the task, or `signal` aborts. */
  wait(taskId: string, ms: number, signal: AbortSignal | undefined): Promise<void>;
}

export function createSessionTasks(): SessionTasks {
  const byId = new Map<string, Client>();
  const refs = new WeakMap<Client, { connection: string; sessionId?: string }>();
  const waiters = new Map<string, Set<() => void>>();
  const wake = (taskId: string): void => waiters.get(taskId)?.forEach((w) => w());
  return {
    add(client, sessionId) {
      const connection = randomUUID();
      byId.set(connection, client);
      refs.set(client, sessionId === undefined ? { connection } : { connection, sessionId });
      client.setNotificationHandler(TaskStatusNotificationSchema, (note) => wake(note.params.taskId));
    },
    remove(client) {
      const ref = refs.get(client);
      if (ref !== undefined && byId.get(ref.connection) === client) byId.delete(ref.connection);
    },
    refOf: (client) => refs.get(client) ?? {},
    find: (connection) => (connection === undefined ? undefined : byId.get(connection)),
    async wait(taskId, ms, signal) {
      const early = new AbortController();
      const set = waiters.get(taskId) ?? new Set<() => void>();
      const waiter = (): void => early.abort();
      set.add(waiter);
      waiters.set(taskId, set);
      try {
        await delay(ms, signal === undefined ? early.signal : AbortSignal.any([signal, early.signal]));
      } finally {
        set.delete(waiter);
        if (set.size === 0) waiters.delete(taskId);
      }
    },
  };
}

/**
 * Whether a call asks the upstream for a task: the gateway's call is a task (it declares the tasks extension), the
 * upstream takes tasks for tools/call, and the tool allows one.
 */
export function asksForTask(client: Client, call: UpstreamCallOptions): boolean {
  const extensions = call.capabilities?.extensions;
  const gatewayTask = isJsonObject(extensions) && extensions[TASKS_EXTENSION] !== undefined;
  const takesTasks = client.getServerCapabilities()?.tasks?.requests?.tools?.call !== undefined;
  return gatewayTask && takesTasks && (call.taskSupport === 'optional' || call.taskSupport === 'required');
}

/** The upstream's CreateTaskResult as the gateway records it: the task, and the session it belongs to. */
export function taskCreated(
  task: Task,
  ref: { connection?: string; sessionId?: string },
): UpstreamTaskCreated {
  const created: UpstreamTaskCreated = { resultType: 'task', taskId: task.taskId, status: task.status };
  if (task.statusMessage !== undefined) created.statusMessage = task.statusMessage;
  if (task.pollInterval !== undefined) created.pollIntervalMs = task.pollInterval;
  if (ref.connection !== undefined) created.connection = ref.connection;
  if (ref.sessionId !== undefined) created.sessionId = ref.sessionId;
  return created;
}

/** The params of a session's tools/call: the tool, its arguments and the call's `_meta`. */
export const callParams = (tool: string, args: JsonObject, call: UpstreamCallOptions) => ({
  name: tool,
  arguments: args,
  ...(call.meta === undefined ? {} : { _meta: call.meta }),
});

/** A session call's request options: its signal, the call timeout (reset by progress), and its progress. */
export function callRequestOptions(call: UpstreamCallOptions, callTimeoutMs: number) {
  const { onProgress } = call;
  return {
    signal: call.signal,
    timeout: callTimeoutMs,
    resetTimeoutOnProgress: true,
    onprogress:
      onProgress === undefined
        ? undefined
        : (p: { progress: number; total?: number; message?: string }) =>
            onProgress(p.progress, p.total, p.message),
  };
}

/** One tools/call asking for a task (the upstream may still answer with a result), with progress and the timeout. */
export async function sendTaskCall(
  client: Client,
  tasks: SessionTasks,
  tool: string,
  args: JsonObject,
  call: UpstreamCallOptions,
  callTimeoutMs: number,
): Promise<UpstreamAnswer> {
  const answer = await client.request(
    { method: 'tools/call', params: callParams(tool, args, call) },
    ResultSchema,
    { ...callRequestOptions(call, callTimeoutMs), task: { ttl: UPSTREAM_TASK_TTL_MS } },
  );
  return answerOf(answer, tasks.refOf(client));
}

/** The most characters of an upstream task id the gateway records. */
export const MAX_UPSTREAM_TASK_ID = 1_024;

/**
 * The answer to a call that asked for a task: a CreateTaskResult, or a result (an upstream may run the call within its
 * request). Anything else is the upstream's error (an McpError, as the session's errors are classified).
 */
export function answerOf(answer: unknown, ref: { connection?: string; sessionId?: string }): UpstreamAnswer {
  if (isJsonObject(answer) && 'task' in answer) {
    const created = CreateTaskResultSchema.safeParse(answer);
    if (!created.success || created.data.task.taskId.length > MAX_UPSTREAM_TASK_ID)
      throw new McpError(
        ErrorCode.InternalError,
        'the upstream answered tools/call with a task the gateway cannot take',
      );
    return taskCreated(created.data.task, ref);
  }
  const result = CallToolResultSchema.safeParse(answer);
  if (!result.success)
    throw new McpError(
      ErrorCode.InternalError,
      'the upstream answered tools/call with neither a task nor a result',
    );
  return result.data as unknown as CallToolResult;
}

/** What following and cancelling an upstream's tasks work with. */
export interface TaskParts {
  target: UpstreamTarget;
  name: string;
  tasks: SessionTasks;
  callTimeoutMs: number;
  connectTimeoutMs: number;
  log: NonNullable<UpstreamOptions['log']>;
}

/** A client on the session a task was created on, when it is no longer open here: HTTP only. */
async function reopen(parts: TaskParts, taskId: string, created: UpstreamTaskCreated | undefined) {
  const sessionId = created?.sessionId;
  if (parts.target.kind !== 'http' || sessionId === undefined)
    throw new UpstreamTaskLostError(
      taskId,
      `the upstream session that created task ${taskId} has closed (a stdio upstream's tasks end with its process)`,
    );
  const { url, headers } = parts.target;
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: headers === undefined ? undefined : { headers },
    fetch: linkedFetch(upstreamFetch(parts.target)),
    sessionId,
  });
  const client = new Client({ name: 'durable-mcp-gateway', version: VERSION }, { capabilities: {} });
  // With a session id on its transport, the SDK's client sends no initialize: it goes on with that session.
  await client.connect(transport);
  return client;
}

/** Whether an error says the upstream no longer knows the task or its session. */
function gone(err: unknown): boolean {
  if (err instanceof UpstreamTaskLostError) return true;
  if (err instanceof StreamableHTTPError) return (err.code ?? 0) >= 400 && (err.code ?? 0) < 500;
  return err instanceof McpError && err.code === (ErrorCode.InvalidParams as number);
}

/** An error's message without the SDK's `MCP error -32602: ` prefixes. */
const bare = (err: McpError): string => err.message.replace(/^(MCP error -?\d+: )+/, '');

/** A task result as the tool's: without the related-task `_meta` key tasks/result adds. */
function resultOf(payload: JsonObject): JsonObject {
  const meta = payload._meta;
  if (!isJsonObject(meta) || !(RELATED_TASK_META_KEY in meta)) return payload;
  const { [RELATED_TASK_META_KEY]: _related, ...others } = meta;
  const { _meta: _dropped, ...rest } = payload;
  return Object.keys(others).length === 0 ? rest : { ...rest, _meta: others };
}

/**
 * How a task that left `working` ended, by tasks/result: the tool's result (also a failed task's tool error, as the
 * upstream gave it), or the upstream's error. A task that asks for input gets the requests its session cannot answer
 * answered with errors by the SDK's client, and tasks/result waits for its end.
 */
async function ending(client: Client, task: Task, signal: AbortSignal | undefined, parts: TaskParts) {
  try {
    const payload = await client.experimental.tasks.getTaskResult(task.taskId, GetTaskPayloadResultSchema, {
      signal,
      timeout: parts.callTimeoutMs,
      resetTimeoutOnProgress: true,
    });
    const result = resultOf(payload as JsonObject);
    if (Array.isArray(result.content)) return { status: 'completed', result } as const;
    return {
      status: 'failed',
      error: {
        code: ErrorCode.InternalError,
        message: task.statusMessage ?? `the upstream task ${task.status}`,
      },
    } as const;
  } catch (err) {
    if (!(err instanceof McpError) || gone(err)) throw err;
    // The SDK's own errors (its codes may also come from the upstream): the session closed, or no answer in time.
    if (err.code === (ErrorCode.ConnectionClosed as number) && client.transport === undefined) throw err;
    if (err.code === (ErrorCode.RequestTimeout as number))
      throw new UpstreamTaskLostError(
        task.taskId,
        `no result of the upstream task ${task.taskId}: ${bare(err)}`,
      );
    return { status: 'failed', error: { code: err.code, message: bare(err), data: err.data } } as const;
  }
}

/** Drops the progress handler the SDK's client keeps for a task's call (it never does so itself). */
function forgetProgress(client: Client | undefined, taskId: string): void {
  const internal = client as unknown as
    { _cleanupTaskProgressHandler?: (taskId: string) => void } | undefined;
  internal?._cleanupTaskProgressHandler?.call(client, taskId);
}

/**
 * Follows a task by polling tasks/get (at its pollInterval, bounded, or sooner on a pushed status) until it leaves
 * `working`, then takes its end from tasks/result. Reading it may fail for a while (the upstream restarting): it is
 * tried again, with back-off, until callTimeoutMs has passed without news. An upstream that no longer knows the task
 * or its session ends it as lost at once.
 */
export async function followSessionTask(
  parts: TaskParts,
  taskId: string,
  follow: UpstreamFollowOptions,
): Promise<UpstreamTaskOutcome> {
  const { signal, created } = follow;
  const connection = created?.connection;
  let reopened: Client | undefined;
  const startedAt = Date.now();
  let lastNews = startedAt;
  const stopped = (): boolean => signal?.aborted === true;
  const stop = (): Error =>
    signal?.reason instanceof Error
      ? signal.reason
      : new Error(`stopped following the upstream task ${taskId}`);
  try {
    for (let failures = 0; ;) {
      if (stopped()) throw stop();
      try {
        const client = parts.tasks.find(connection) ?? (reopened ??= await reopen(parts, taskId, created));
        const task = await client.experimental.tasks.getTask(taskId, {
          signal,
          timeout: parts.connectTimeoutMs,
        });
        follow.onUpdate?.(task as unknown as JsonObject);
        if (task.status === 'cancelled') return { status: 'cancelled' };
        // News only while it works: a result that cannot be read counts towards callTimeoutMs however often the task
        // says it has one.
        if (task.status !== 'working') return await ending(client, task, signal, parts);
        lastNews = Date.now();
        failures = 0;
        if (Date.now() - startedAt >= UPSTREAM_TASK_TTL_MS)
          throw new UpstreamTaskLostError(
            taskId,
            `the upstream task ${taskId} outlived the TTL it was asked for`,
          );
        const poll = Math.min(POLL_MAX_MS, Math.max(POLL_MIN_MS, task.pollInterval ?? 1_000));
        await parts.tasks.wait(taskId, poll, signal);
      } catch (err) {
        if (stopped()) throw stop();
        if (gone(err))
          throw err instanceof UpstreamTaskLostError
            ? err
            : new UpstreamTaskLostError(
                taskId,
                `the upstream no longer knows its task ${taskId}: ${errorMessage(err)}`,
              );
        await readAgainLater(parts, taskId, err, lastNews, failures++, signal);
      }
    }
  } finally {
    forgetProgress(parts.tasks.find(connection), taskId);
    await reopened?.close().catch(() => undefined);
  }
}

/** Sends tasks/cancel for a task, on the session it belongs to. */
export async function cancelSessionTask(
  parts: TaskParts,
  taskId: string,
  created: UpstreamTaskCreated | undefined,
): Promise<void> {
  const connection = created?.connection;
  const open = parts.tasks.find(connection);
  let client: Client | undefined;
  try {
    client = open ?? (await reopen(parts, taskId, created));
    await client.experimental.tasks.cancelTask(taskId, { timeout: parts.connectTimeoutMs });
  } catch (err) {
    parts.log('warn', 'gateway: the upstream task could not be cancelled', {
      upstream: parts.name,
      upstreamTaskId: taskId,
      error: errorMessage(err),
    });
    throw err;
  } finally {
    if (open === undefined) await client?.close().catch(() => undefined);
  }
}
