// What the gateway needs of the MCP server it fronts (the upstream), whichever protocol it speaks: its tools, its
// calls, and the tasks it answers calls with (a 2026-07-28 upstream's with the tasks extension, a 2025-11-25 one's
// asked for with `params.task`). A call's errors say whether the request can have reached the upstream:
// `UpstreamNotSentError` (it cannot), `UpstreamLostError` (the connection ended or timed out while the call was out:
// the upstream may have done it), `UpstreamRefusedError` (a JSON-RPC error answer). create-upstream.ts picks the
// implementation.
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type {
  CallToolResult,
  InputRequest,
  InputRequests,
  InputResponse,
  InputResponses,
  JsonObject,
  JsonValue,
} from '../protocol/types.js';
import { OAuthFlowError, SignInRequiredError, type ClientAuth } from '../client/oauth/types.js';
import { delay } from '../client/wait.js';
import { META_SERVER_INFO } from '../wire/meta-keys.js';
import { backoffCeilingMs } from '../pacing/backoff.js';

/**
 * Where the upstream is: a command to run (stdio) or the URL of its Streamable HTTP endpoint, with fixed headers (a
 * static token) or a sign-in (`auth`: client credentials or a stored sign-in of the gateway's, refreshed as it goes).
 */
export type UpstreamTarget =
  | { kind: 'stdio'; command: string; args: string[]; env?: Record<string, string>; cwd?: string }
  | { kind: 'http'; url: URL; headers?: Record<string, string>; auth?: ClientAuth };

/** The `_meta` key under which a call's idempotency key goes upstream (a gateway task's). */
export const META_UPSTREAM_IDEMPOTENCY_KEY = 'dev.durable-mcp/idempotencyKey';

/** A tool as the upstream lists it (its name, schemas and annotations, passed on unchanged). */
export type UpstreamTool = Tool;

/** The request cannot have reached the upstream (no session could be opened, or it closed before sending). */
export class UpstreamNotSentError extends Error {
  override name = 'UpstreamNotSentError';
}

/** The session ended, or the call timed out, while the call was out: the upstream may or may not have done it. */
export class UpstreamLostError extends Error {
  override name = 'UpstreamLostError';
}

/** A task of the upstream's can no longer be followed (the upstream no longer knows it, or stayed unreachable). */
export class UpstreamTaskLostError extends UpstreamLostError {
  override name = 'UpstreamTaskLostError';
  constructor(
    readonly taskId: string,
    message: string,
  ) {
    super(message);
  }
}

/** The upstream answered the call with a JSON-RPC error: a definite refusal, the same on every attempt. */
export class UpstreamRefusedError extends Error {
  override name = 'UpstreamRefusedError';
  constructor(
    readonly code: number,
    message: string,
    readonly data: unknown,
  ) {
    super(message);
  }
}

/**
 * The upstream stopped waiting for the answer to a request it sent during a call (a 2025-11-25 server's
 * notifications/cancelled for its request, e.g. on its own request timeout): what UpstreamCallOptions.onInput's
 * signal is aborted with then.
 */
export class UpstreamInputAbandonedError extends Error {
  override name = 'UpstreamInputAbandonedError';
  constructor(readonly method: string) {
    super(`the upstream stopped waiting for the answer to its ${method}`);
  }
}

/** A 2026-07-28 upstream's MRTR answer: input it needs before it goes on, and state to send back with the answers. */
export interface UpstreamInputRequired {
  resultType: 'input_required';
  inputRequests?: InputRequests;
  requestState?: string;
}

/**
 * An upstream's CreateTaskResult (a 2026-07-28 one as it gave it; a 2025-11-25 one's task in the same shape, with the
 * session it belongs to): the call goes on as a task of the upstream's, followed by its id.
 */
export interface UpstreamTaskCreated {
  resultType: 'task';
  taskId: string;
  status: string;
  statusMessage?: string;
  pollIntervalMs?: number;
  /** A 2025-11-25 upstream's task: the id, in the gateway process that made it, of the session that created it. */
  connection?: string;
  /** A 2025-11-25 upstream's task over HTTP: the Mcp-Session-Id of the session that created it (its tasks are kept per session). */
  sessionId?: string;
  [key: string]: JsonValue | undefined;
}

/** What the upstream answered a tools/call: its result, a request for input (MRTR), or a task it created. */
export type UpstreamAnswer = CallToolResult | UpstreamInputRequired | UpstreamTaskCreated;

export const isTaskCreated = (answer: UpstreamAnswer): answer is UpstreamTaskCreated =>
  (answer as { resultType?: unknown }).resultType === 'task';

export const isInputRequired = (answer: UpstreamAnswer): answer is UpstreamInputRequired =>
  (answer as { resultType?: unknown }).resultType === 'input_required';

/**
 * An upstream result as the gateway's own: without its resultType (the gateway sets its own) and without the
 * upstream's serverInfo (the result comes from the gateway); everything else as the upstream gave it.
 */
export function callResultOf(result: CallToolResult | JsonObject): CallToolResult {
  const { resultType: _type, ...rest } = result as JsonObject;
  const meta = rest._meta;
  if (typeof meta === 'object' && meta !== null && !Array.isArray(meta) && META_SERVER_INFO in meta) {
    const { [META_SERVER_INFO]: _info, ...others } = meta;
    if (Object.keys(others).length === 0) delete rest._meta;
    else rest._meta = others;
  }
  return rest as unknown as CallToolResult;
}

export interface UpstreamCallOptions {
  signal?: AbortSignal;
  /** Whose call it is: with sessions per principal (UpstreamOptions.sessions), it goes on that principal's session. */
  owner?: { tenant: string; principal: string };
  /** Each `notifications/progress` of the call (a progress token is sent only when given). */
  onProgress?: (progress: number, total: number | undefined, message: string | undefined) => void;
  /**
   * Each log message (`notifications/message`) the upstream sends about the call: from a 2026-07-28 upstream those of
   * its response stream (the call asks for `info` and above); from a 2025-11-25 session those on the call's HTTP
   * response stream, or over stdio while it is the only call out on the process (nothing else says whose they are).
   */
  onLog?: (level: string, data: unknown, logger: string | undefined) => void;
  /** Merged into the request's `_meta`. */
  meta?: JsonObject;
  /**
   * The client capabilities this call declares to a 2026-07-28 upstream (input it may ask for, the tasks extension);
   * a 2025-11-25 session declares elicitation (form), sampling and roots when it opens, for every call, and refuses
   * what a call cannot answer (see onInput).
   */
  capabilities?: JsonObject;
  /**
   * Answers a request the upstream sends during the call on a 2025-11-25 session (elicitation, sampling, roots), with
   * the call still out: without it such a request is refused. `signal` fires when the upstream stops waiting (its
   * reason an UpstreamInputAbandonedError) or the call ends; what it throws is the upstream's error answer.
   */
  onInput?: (request: InputRequest, signal: AbortSignal) => Promise<InputResponse>;
  /** An MRTR retry: the answers to the upstream's inputRequests (by its keys). */
  inputResponses?: InputResponses;
  /** An MRTR retry: the upstream's requestState, exactly as it was received. */
  requestState?: string;
  /**
   * The tool's `execution.taskSupport` as the upstream lists it: a 2025-11-25 session asks for a task (`params.task`)
   * only for a tool that allows one, and only when the capabilities declare the tasks extension.
   */
  taskSupport?: 'forbidden' | 'optional' | 'required';
}

/** How an upstream task ended. */
export type UpstreamTaskOutcome =
  | { status: 'completed'; result: JsonObject }
  | { status: 'failed'; error: { code: number; message: string; data?: unknown } }
  | { status: 'cancelled' };

export interface UpstreamFollowOptions {
  /** Stops following (the task goes on upstream): the reason is thrown. */
  signal?: AbortSignal;
  /** The recorded answer that made the task (a 2025-11-25 upstream's names the session the task belongs to). */
  created?: UpstreamTaskCreated;
  /** Whose call made the task (UpstreamCallOptions.owner): it is followed with the same credentials. */
  owner?: { tenant: string; principal: string };
  /** Each state of the task seen, pushed or polled (a DetailedTask). */
  onUpdate?: (task: JsonObject) => void;
  /**
   * Answers input requests of the task (each key once, by the upstream's keys); the answers go back with tasks/update.
   * What it throws ends following and is thrown.
   */
  onInput: (requests: InputRequests) => InputResponses | Promise<InputResponses>;
}

/** How one call to the upstream ended, as metrics count it (`task`, `input_required`: the upstream's answer). */
export type UpstreamCallOutcome =
  'ok' | 'tool_error' | 'task' | 'input_required' | 'refused' | 'lost' | 'not_sent' | 'cancelled';

/** Told of each call's outcome and duration, and whether the upstream answers (metrics, health). */
export interface UpstreamObserver {
  call(outcome: UpstreamCallOutcome, durationMs: number): void;
  /** True once the upstream answered a request, false once one could not reach it or got no answer. */
  answering(up: boolean): void;
}

export interface UpstreamOptions {
  /**
   * `shared` (default): every call goes on the gateway's session(s). `per-principal`: each principal's calls go on a
   * 2025-11-25 session of their own (for stdio, a child process of their own), for an upstream that keeps state per
   * session; the least recently used idle one is closed past MAX_PRINCIPAL_SESSIONS. A 2026-07-28 upstream has no
   * sessions: the setting does not apply to it.
   */
  sessions?: 'shared' | 'per-principal';
  /**
   * Bearer tokens for an HTTP upstream by the caller's tenant: a tenant named here has its calls sent with its own
   * token (on connections of its own), any other with the target's headers.
   */
  tenantTokens?: Readonly<Record<string, string>>;
  /**
   * Sessions (for stdio, child processes) kept to a 2025-11-25 upstream, each call sent on the one with the fewest
   * calls out (default 1): for a server that works on one request at a time.
   */
  poolSize?: number;
  /** Told of every call and session (e.g. the gateway's Prometheus metrics). */
  observer?: UpstreamObserver;
  /** How long one call may take without progress before it counts as lost (default one hour). */
  callTimeoutMs?: number;
  /** How long a call waits for a session to open before it fails as not sent (default 30 s). */
  connectTimeoutMs?: number;
  /** The child's stderr lines (stdio), and what happened to the session; never a credential. */
  log?: (level: 'info' | 'warn', message: string, fields?: JsonObject) => void;
}

export interface Upstream {
  /** A readable name for logs and errors: the command or the URL (without credentials). */
  readonly name: string;
  /** Opens the session if needed (waiting up to connectTimeoutMs); throws UpstreamNotSentError when it cannot. */
  ready(signal?: AbortSignal): Promise<void>;
  /** Every tool the upstream lists now (all pages). */
  listTools(): Promise<UpstreamTool[]>;
  /** One round of a call: a 2025-11-25 session answers a result, or a task when one was asked for. */
  callTool(name: string, args: JsonObject, options?: UpstreamCallOptions): Promise<UpstreamAnswer>;
  /**
   * Follows a task the upstream answered a call with, until it ends (a 2026-07-28 upstream's with the tasks extension,
   * a 2025-11-25 one's asked for with `params.task`). An upstream that stays unreachable for callTimeoutMs, or that no
   * longer knows the task (or its session), fails it with UpstreamTaskLostError.
   */
  followTask?(taskId: string, options: UpstreamFollowOptions): Promise<UpstreamTaskOutcome>;
  /** Asks the upstream to cancel one of its tasks (tasks/cancel); `created` as for followTask. */
  cancelTask?(
    taskId: string,
    owner?: { tenant: string; principal: string },
    created?: UpstreamTaskCreated,
  ): Promise<void>;
  /** Called when the upstream says its tool list changed. */
  onToolsChanged(listener: () => void): void;
  close(): Promise<void>;
}

export const DEFAULT_CALL_TIMEOUT_MS = 60 * 60 * 1000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;

/** Back-off between attempts to reach the upstream: doubling from 100 ms to 5 s. */
export const backoff = (failures: number): number => backoffCeilingMs(failures, 100, 5_000);

/** The upstream's name in logs: the command and its arguments, or the URL without user info, query or fragment. */
export function describeTarget(target: UpstreamTarget): string {
  if (target.kind === 'stdio') return `stdio:${[target.command, ...target.args].join(' ')}`;
  return `${target.url.origin}${target.url.pathname}`;
}

/** An error's message, for what the gateway logs or reports of it. */
export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * The sign-in's own failure behind `err` (a sign-in needed that nobody can make, or an authorization server's
 * refusal), found along its causes; undefined for any other error. The request it stopped was not sent, or was
 * refused before the upstream took it, and sending it again will not help until the sign-in is put right.
 */
export function signInFailure(err: unknown): SignInRequiredError | OAuthFlowError | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e instanceof Error; depth++, e = e.cause) {
    if (e instanceof SignInRequiredError || e instanceof OAuthFlowError) return e;
  }
  return undefined;
}

/**
 * After a failed read of an upstream task being followed: lost (thrown) once there has been no news of it for
 * `callTimeoutMs` since `lastNews`; otherwise logged, and resolved after the back-off for `failures` failures so far.
 */
export async function readAgainLater(
  parts: { name: string; callTimeoutMs: number; log: NonNullable<UpstreamOptions['log']> },
  taskId: string,
  err: unknown,
  lastNews: number,
  failures: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (Date.now() - lastNews >= parts.callTimeoutMs)
    throw new UpstreamTaskLostError(
      taskId,
      `no news of the upstream task ${taskId} for ${parts.callTimeoutMs} ms: ${errorMessage(err)}`,
    );
  parts.log('warn', 'gateway: cannot read the upstream task; trying again', {
    upstream: parts.name,
    upstreamTaskId: taskId,
    error: errorMessage(err),
  });
  await delay(backoff(failures), signal);
}

/** How a failed call counts in the metrics. */
export const outcomeOf = (err: Error, signal: AbortSignal | undefined): UpstreamCallOutcome =>
  signal?.aborted === true
    ? 'cancelled'
    : err instanceof UpstreamRefusedError
      ? 'refused'
      : err instanceof UpstreamNotSentError
        ? 'not_sent'
        : 'lost';

/** The upstream's label in metrics: the host of an HTTP upstream, the program of a stdio one (never its arguments). */
export function upstreamLabel(target: UpstreamTarget): string {
  if (target.kind === 'http') return target.url.host;
  return target.command.split(/[\\/]/).pop() ?? target.command;
}
