// The gateway's connection to a 2026-07-28 upstream over Streamable HTTP or stdio (a child process, started again
// with back-off after it exits), made with durable-mcp's own client: no
// session, the full envelope on every request, and on each call the capabilities the gateway declares for it (the
// input its caller can answer; the tasks extension when the gateway's call is itself a task). An MRTR answer and a
// task are handed back as the upstream gave them; a task is followed (pushed while the upstream offers it, polled at
// its pollIntervalMs otherwise), answered with tasks/update and cancelled with tasks/cancel.
import { randomUUID } from 'node:crypto';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createClient, type McpClient } from '../client/client.js';
import { InvalidResponseError } from '../client/errors.js';
import { neverSent, turnedAway } from '../client/retry.js';
import type { TaskOutcome } from '../client/task-handle.js';
import { createStdioTransport } from '../client/stdio-transport.js';
import { delay } from '../client/wait.js';
import { backoffMs } from '../pacing/backoff.js';
import type { JsonObject } from '../protocol/types.js';
import { VERSION } from '../version.js';
import { ErrorCode } from '../wire/codes.js';
import { isJsonObject } from '../wire/jsonrpc.js';
import { LATEST_PROTOCOL_VERSION, META_LOG_LEVEL, TASKS_EXTENSION } from '../wire/meta-keys.js';
import { ProtocolError } from '../wire/protocol-error.js';
import {
  backoff,
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  describeTarget,
  errorMessage,
  readAgainLater,
  signInFailure,
  UpstreamLostError,
  UpstreamNotSentError,
  UpstreamRefusedError,
  UpstreamTaskLostError,
  type Upstream,
  type UpstreamAnswer,
  type UpstreamCallOptions,
  type UpstreamFollowOptions,
  type UpstreamOptions,
  type UpstreamTarget,
  type UpstreamTaskOutcome,
  type UpstreamTool,
} from './upstream.js';

/** What the calls of one modern upstream share. */
interface Parts {
  client: McpClient;
  name: string;
  callTimeoutMs: number;
  connectTimeoutMs: number;
  log: NonNullable<UpstreamOptions['log']>;
}

const clientInfo = { name: 'durable-mcp-gateway', version: VERSION };

/**
 * The client for an upstream, with no retries of its own (the gateway decides what is sent again): over HTTP with
 * its headers or sign-in; over stdio a child process with only the environment it needs and the variables named for it (never
 * the gateway's own secrets), its stderr logged, started again after it exits (with back-off when it keeps exiting).
 */
function clientFor(target: UpstreamTarget, log?: UpstreamOptions['log']): McpClient {
  if (target.kind === 'http') {
    const { url, headers, auth } = target;
    return createClient({ url: url.href, headers, auth, clientInfo, retry: false });
  }
  const name = describeTarget(target);
  const transport = createStdioTransport(
    target.command,
    target.args,
    { ...getDefaultEnvironment(), ...target.env },
    {
      cwd: target.cwd,
      onStderr: (line) => log?.('info', 'upstream stderr', { upstream: name, line }),
      restartDelayMs: backoff,
    },
  );
  return createClient({ transport, clientInfo });
}

/** A failure that says nothing about the upstream's protocol: no connection, or a balancer's or a busy server's 5xx. */
const unreachable = (err: unknown): boolean =>
  (!(err instanceof ProtocolError) && !(err instanceof InvalidResponseError)) || turnedAway(err);

/**
 * The upstream's DiscoverResult when it speaks 2026-07-28; undefined when it answers server/discover otherwise (a
 * 2025-11-25 server refuses a request outside a session, or before `initialize` on stdio). An upstream that cannot be
 * reached (or a stdio program that cannot be started) is asked again, with back-off, until connectTimeoutMs has
 * passed: then UpstreamNotSentError. A stdio server that does not answer in that time, or whose process exits
 * instead, is taken for a 2025-11-25 one (the stdio probe of the 2026-07-28 revision): a session is tried next.
 */
export async function discoverModern(
  target: UpstreamTarget,
  options: UpstreamOptions,
  signal?: AbortSignal,
): Promise<JsonObject | undefined> {
  const client = clientFor(target, options.log);
  const until = Date.now() + (options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS);
  try {
    for (let failures = 0; ; failures++) {
      const left = Math.max(1, until - Date.now());
      const timeout = AbortSignal.timeout(left);
      const attempt = AbortSignal.any([timeout, ...(signal === undefined ? [] : [signal])]);
      try {
        const found = await client.request('server/discover', {}, { signal: attempt });
        const versions = found.supportedVersions;
        return Array.isArray(versions) && versions.includes(LATEST_PROTOCOL_VERSION) ? found : undefined;
      } catch (err) {
        // A sign-in that cannot be made stops the gateway at once, with its own message (run `durable-mcp login`).
        const signIn = signInFailure(err);
        if (signIn !== undefined) throw signIn;
        if (target.kind === 'stdio' && signal?.aborted !== true && !neverSent(err)) return undefined;
        if (!unreachable(err)) return undefined;
        if (Date.now() >= until || signal?.aborted === true)
          throw new UpstreamNotSentError(
            `cannot reach the upstream (${describeTarget(target)}): ${errorMessage(err)}`,
          );
        await delay(Math.min(backoff(failures), until - Date.now()), signal);
      }
    }
  } finally {
    await client.close();
  }
}

/** An AbortController linked to `parent` that also aborts after `ms` without a reset (a call without progress). */
function idleTimer(ms: number, parent: AbortSignal | undefined) {
  const controller = new AbortController();
  let timedOut = false;
  const fire = (): void => {
    timedOut = true;
    controller.abort(new Error(`no answer and no progress for ${ms} ms`));
  };
  let timer = setTimeout(fire, ms);
  const follow = (): void => controller.abort(parent?.reason);
  if (parent?.aborted === true) follow();
  else parent?.addEventListener('abort', follow, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    reset(): void {
      clearTimeout(timer);
      timer = setTimeout(fire, ms);
    },
    stop(): void {
      clearTimeout(timer);
      parent?.removeEventListener('abort', follow);
    },
  };
}

/** A call's failure as one of ours: refused (a JSON-RPC error answer), not sent, or lost. */
function classify(err: unknown, signal: AbortSignal | undefined, timedOut: boolean, ms: number): unknown {
  if (signal?.aborted === true) return err;
  const signIn = signInFailure(err);
  if (signIn !== undefined) return new UpstreamNotSentError(signIn.message, { cause: signIn });
  if (timedOut)
    return new UpstreamLostError(`the upstream did not answer in time (no progress for ${ms} ms)`);
  if (err instanceof ProtocolError) {
    if (turnedAway(err))
      return new UpstreamNotSentError(`the upstream turned the call away (HTTP ${err.httpStatus})`);
    return new UpstreamRefusedError(err.code, err.message, err.data);
  }
  if (neverSent(err)) return new UpstreamNotSentError(`cannot reach the upstream: ${errorMessage(err)}`);
  return new UpstreamLostError(`the call to the upstream failed: ${errorMessage(err)}`);
}

const declaresTasks = (capabilities: JsonObject | undefined): boolean =>
  isJsonObject(capabilities?.extensions) && capabilities.extensions[TASKS_EXTENSION] !== undefined;

/** The upstream's answer, checked: a result, an MRTR request, or (when the call declared the extension) a task. */
function answerOf(result: JsonObject, call: UpstreamCallOptions): UpstreamAnswer {
  const type = result.resultType ?? 'complete';
  if (type === 'complete' && Array.isArray(result.content)) return result as unknown as UpstreamAnswer;
  if (type === 'input_required') return result as unknown as UpstreamAnswer;
  if (type === 'task' && declaresTasks(call.capabilities) && typeof result.taskId === 'string')
    return result as unknown as UpstreamAnswer;
  throw new UpstreamRefusedError(
    ErrorCode.InternalError,
    `the upstream answered tools/call with a result the gateway cannot accept (resultType ${JSON.stringify(type)})`,
    undefined,
  );
}

/** The params of one round of tools/call. */
function callParams(tool: string, args: JsonObject, call: UpstreamCallOptions): JsonObject {
  const params: JsonObject = { name: tool, arguments: args };
  if (call.inputResponses !== undefined) params.inputResponses = call.inputResponses;
  if (call.requestState !== undefined) params.requestState = call.requestState;
  return params;
}

/** Hands a notifications/message of this call's stream to the caller's onLog. */
function logOf(note: JsonObject, call: UpstreamCallOptions): void {
  const params = note.params;
  if (note.method !== 'notifications/message' || !isJsonObject(params) || typeof params.level !== 'string')
    return;
  call.onLog?.(params.level, params.data, typeof params.logger === 'string' ? params.logger : undefined);
}

/** Hands a notifications/progress of this call (by its token) to the caller's onProgress. */
function progressOf(note: JsonObject, token: string | undefined, call: UpstreamCallOptions): void {
  const params = note.params;
  if (note.method !== 'notifications/progress' || !isJsonObject(params) || params.progressToken !== token)
    return;
  if (typeof params.progress !== 'number') return;
  const total = typeof params.total === 'number' ? params.total : undefined;
  const message = typeof params.message === 'string' ? params.message : undefined;
  call.onProgress?.(params.progress, total, message);
}

/**
 * One round of tools/call. A refused connection sent nothing: it is tried again (with back-off) until
 * connectTimeoutMs has passed, as a session waits to open, and then fails as not sent.
 */
async function sendCall(
  parts: Parts,
  tool: string,
  args: JsonObject,
  call: UpstreamCallOptions,
): Promise<UpstreamAnswer> {
  const { client, callTimeoutMs } = parts;
  const token = call.onProgress === undefined ? undefined : `gateway-${randomUUID()}`;
  const meta: JsonObject = {
    ...call.meta,
    ...(token === undefined ? {} : { progressToken: token }),
    // Without a level the upstream sends no log messages for the request.
    ...(call.onLog === undefined ? {} : { [META_LOG_LEVEL]: 'info' }),
  };
  const until = Date.now() + parts.connectTimeoutMs;
  for (let failures = 0; ; failures++) {
    const timer = idleTimer(callTimeoutMs, call.signal);
    try {
      const result = await client.request('tools/call', callParams(tool, args, call), {
        signal: timer.signal,
        capabilities: call.capabilities ?? {},
        meta,
        onNotification: (note) => {
          timer.reset();
          progressOf(note, token, call);
          logOf(note, call);
        },
      });
      return answerOf(result, call);
    } catch (err) {
      if (neverSent(err) && call.signal?.aborted !== true && Date.now() < until) {
        await delay(backoff(failures), call.signal);
        continue;
      }
      throw classify(err, call.signal, timer.timedOut(), callTimeoutMs);
    } finally {
      timer.stop();
    }
  }
}

const FATAL_TASK_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.InvalidParams,
  ErrorCode.InvalidRequest,
  ErrorCode.MethodNotFound,
  ErrorCode.HeaderMismatch,
  ErrorCode.MissingRequiredClientCapability,
]);

function outcomeOf(outcome: TaskOutcome): UpstreamTaskOutcome {
  if (outcome.status === 'completed') return { status: 'completed', result: outcome.result };
  if (outcome.status === 'failed') return { status: 'failed', error: outcome.error };
  return { status: 'cancelled' };
}

/**
 * Follows an upstream task to its end with the client's task handle. Reading it may fail for a while (the upstream
 * restarting, a balancer turning requests away): following starts again, with back-off, until it has failed for
 * callTimeoutMs without news of the task in between. An upstream that no longer knows the task (or refuses to tell)
 * ends it as lost at once.
 */
async function followTask(
  parts: Parts,
  taskId: string,
  follow: UpstreamFollowOptions,
): Promise<UpstreamTaskOutcome> {
  let failingSince: number | undefined;
  let failures = 0;
  let fromInput: { err: unknown } | undefined;
  const onInput = async (requests: Record<string, JsonObject>): Promise<Record<string, JsonObject>> => {
    try {
      return await follow.onInput(requests as Parameters<UpstreamFollowOptions['onInput']>[0]);
    } catch (err) {
      fromInput = { err };
      throw err;
    }
  };
  const onUpdate = (task: JsonObject): void => {
    failingSince = undefined;
    failures = 0;
    follow.onUpdate?.(task);
  };
  for (;;) {
    try {
      return outcomeOf(await parts.client.task(taskId).result({ signal: follow.signal, onUpdate, onInput }));
    } catch (err) {
      if (fromInput !== undefined) throw fromInput.err;
      if (follow.signal?.aborted === true) throw err;
      if (err instanceof ProtocolError && FATAL_TASK_ERRORS.has(err.code))
        throw new UpstreamTaskLostError(
          taskId,
          `the upstream no longer answers for its task ${taskId}: ${err.message}`,
        );
      failingSince ??= Date.now();
      await readAgainLater(parts, taskId, err, failingSince, failures++, follow.signal);
    }
  }
}

/**
 * Tells listeners of the upstream's notifications/tools/list_changed, over a subscriptions/listen stream kept open
 * while the gateway runs (opened again after it ends, with back-off; the listeners are told once more after each
 * reopening, for a change the gap may have hidden). Only when the upstream advertises tools.listChanged.
 */
function toolsWatcher(parts: Parts, discovered: JsonObject, closed: AbortSignal) {
  const listeners: (() => void)[] = [];
  const tools = isJsonObject(discovered.capabilities) ? discovered.capabilities.tools : undefined;
  const offered = isJsonObject(tools) && tools.listChanged === true;
  let started = false;
  const tell = (): void => listeners.forEach((listener) => listener());
  const watch = async (): Promise<void> => {
    for (let streams = 0, failures = 0; !closed.aborted; streams++) {
      const opened = Date.now();
      try {
        await parts.client.request(
          'subscriptions/listen',
          { notifications: { toolsListChanged: true } },
          {
            signal: closed,
            onNotification: (note) => {
              if (note.method === 'notifications/tools/list_changed') tell();
              if (note.method === 'notifications/subscriptions/acknowledged' && streams > 0) tell();
            },
          },
        );
      } catch (err) {
        if (closed.aborted) return;
        if (err instanceof ProtocolError && FATAL_TASK_ERRORS.has(err.code)) return;
      }
      failures = Date.now() - opened >= 10_000 ? 0 : failures + 1;
      await delay(backoffMs(failures, 250, 10_000), closed);
    }
  };
  return (listener: () => void): void => {
    listeners.push(listener);
    if (!offered || started) return;
    started = true;
    void watch();
  };
}

/** An upstream that answered server/discover as a 2026-07-28 server (`discovered`: its DiscoverResult). */
export function createModernUpstream(
  target: UpstreamTarget,
  options: UpstreamOptions,
  discovered: JsonObject,
): Upstream {
  const parts: Parts = {
    client: clientFor(target, options.log),
    name: describeTarget(target),
    callTimeoutMs: options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    log: options.log ?? (() => undefined),
  };
  const closing = new AbortController();
  return {
    name: parts.name,
    // Stateless: nothing to open. A call that finds the upstream away waits for it (sendCall).
    ready: async () => undefined,
    listTools: async () => (await parts.client.listTools()) as unknown as UpstreamTool[],
    callTool: (tool, args, call = {}) => sendCall(parts, tool, args, call),
    followTask: (taskId, follow) => followTask(parts, taskId, follow),
    async cancelTask(taskId) {
      try {
        await parts.client.request(
          'tasks/cancel',
          { taskId },
          { signal: AbortSignal.timeout(parts.connectTimeoutMs) },
        );
      } catch (err) {
        parts.log('warn', 'gateway: the upstream task could not be cancelled', {
          upstream: parts.name,
          upstreamTaskId: taskId,
          error: errorMessage(err),
        });
        throw err;
      }
    },
    onToolsChanged: toolsWatcher(parts, discovered, closing.signal),
    async close() {
      closing.abort();
      await parts.client.close();
    },
  };
}
