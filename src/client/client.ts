// The durable-mcp client: full envelope on every request, MRTR rounds, tasks as handles, an optional journal.
import { collectParamHeaders, type ParamHeader } from '../wire/param-headers.js';
import { encodeHeaderValue } from '../wire/headers.js';
import type { JsonValue } from '../json.js';
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import { eventUrl, postEvent, type EventOutcome } from './events.js';
import { LATEST_PROTOCOL_VERSION, TASKS_EXTENSION } from '../wire/meta-keys.js';
import { traitsOf } from '../wire/method-traits.js';
import { VERSION } from '../version.js';
import { callTool, type CallOptions, type CallResult, type ToolCallDeps } from './call-tool.js';
import { createHttpTransport } from './http-transport.js';
import type { Journal } from './journal.js';
import type { ClientAuth } from './oauth/types.js';
import { createRequester, type Request, type RequestOptions } from './request.js';
import { resumeAll, type ResumedTasks } from './resume.js';
import type { RetryOptions } from './retry.js';
import { TaskHandle, type InputHandler } from './task-handle.js';
import type { ClientTransport } from './transport.js';
import {
  followTaskStream,
  readTaskStream,
  type FollowStreamOptions,
  type StreamChunk,
  type StreamPage,
} from './stream-reader.js';

export type { CallOptions, CallResult } from './call-tool.js';
export type { RequestOptions } from './request.js';

export interface CreateClientOptions {
  /** Streamable HTTP endpoint; or give a `transport` (e.g. createStdioTransport). */
  url?: string;
  transport?: ClientTransport;
  token?: string | (() => string | Promise<string>);
  /**
   * A sign-in (e.g. `createOAuth({ serverUrl: url, ... })` from this module) for the HTTP transport made from `url`
   * and for `sendEvent`: its token is sent with each request, and it answers the server's 401 and
   * `insufficient_scope` 403 challenges (the request is then sent again).
   */
  auth?: ClientAuth;
  /** Headers sent with every request over the HTTP transport made from `url` (e.g. a proxy's own credentials). */
  headers?: Record<string, string>;
  clientInfo?: { name: string; version: string };
  /** Extra client capabilities; elicitation is declared when `onInput` is given, the tasks extension unless `tasks: false`. */
  capabilities?: JsonObject;
  tasks?: boolean;
  /** Answers input requests (MRTR rounds and task input). Without it, input requests raise InputRequiredError. */
  onInput?: InputHandler;
  /**
   * Where calls and task ids are kept so a restarted client can resume them (`resumeAll`), e.g.
   * `createSqliteJournal(path)` from `durable-mcp/journal`.
   */
  journal?: Journal;
  protocolVersion?: string;
  fetch?: typeof fetch;
  /** Most MRTR rounds for one call before giving up (default 16). */
  maxRounds?: number;
  /**
   * How many times a tools/call with an idempotency key whose answer was lost (the connection failed, or a proxy
   * answered instead of the server) is sent again, with the same key, before the error is thrown (default 2). A
   * refused connection or an unknown host lost nothing, since nothing was sent: `retry` alone covers those. A call
   * without a key (the tasks extension off and no `idempotencyKey` given) is never sent twice. A task is never
   * created twice this way. A tool that runs without a task may run again when its first round is repeated; a later
   * round (one that carries a `requestState`) is refused as already used (-32602) rather than acted on twice.
   */
  callRetries?: number;
  /** Wait before the first such retry, doubled for each next one (default 250 ms). */
  callRetryDelayMs?: number;
  /**
   * Over the HTTP transport made from `url`: requests safe to repeat (reads, task methods, listen openings, calls with
   * an idempotency key) are sent again after HTTP 502/503 or a connection refused or reset before any response, as
   * during a rolling restart behind a balancer (default: on, see {@link RetryOptions}); `false` turns this off. A
   * given `transport` follows its own settings.
   */
  retry?: RetryOptions | false;
}

export interface McpClient {
  request(method: string, params?: JsonObject, options?: RequestOptions): Promise<JsonObject>;
  discover(): Promise<JsonObject>;
  /** Lists every tool (following cursors); tools with invalid x-mcp-header annotations are left out. */
  listTools(): Promise<JsonObject[]>;
  callTool(name: string, args?: JsonObject, options?: CallOptions): Promise<CallResult>;
  /** A handle on an existing task (e.g. from another process). */
  task(taskId: string, tool?: string): TaskHandle;
  /**
   * Handles for every unfinished task in the journal for this server, each with the label, tool and arguments of the
   * call that created it. Calls the journal recorded as sent but never answered (the client stopped, or every retry
   * failed) are sent again first, with their idempotency keys and labels: each gets the task it created, if it
   * created one, and never a second one; its handle is in the array even if the task ended meanwhile.
   *
   * Every call that could not be sent again is in `failures`, with its journal record and the error: one the server
   * refused (e.g. a quota, a tool it no longer has) is forgotten by the journal; one the server did not answer (it
   * could not be reached: then the calls after it are not tried) stays pending for the next `resumeAll()`. Calls the
   * server answered at once, without a task, are in `results`. Resolves even when calls fail.
   */
  resumeAll(): Promise<ResumedTasks>;
  /**
   * One read of stream `name` of task `taskId` (ctx.stream on the server) from `offset` (default 0): its chunks (at
   * most a page), the offset to read from next, and whether it is over.
   */
  readStream(taskId: string, name: string, offset?: number): Promise<StreamPage>;
  /**
   * The chunks of stream `name` of task `taskId` from `options.from` on, as they come, until the stream is over: read
   * again when the server tells of an update, and every `pollMs` meanwhile. After a lost connection, follow again
   * from the offset after the last chunk received.
   */
  followStream(taskId: string, name: string, options?: FollowStreamOptions): AsyncGenerator<StreamChunk>;
  /**
   * Delivers event `name` with `payload` to the caller's task `taskId` (a tool waiting in `ctx.waitForEvent`), with
   * the client's credentials, at `/tasks/{id}/events/{name}` on the origin of `url` (only with a url). Resolves with
   * what came of it; a refusal rejects with EventRefusedError (404: no such task of the caller's; 409: another
   * payload came first; 410: the task ended or stopped waiting; 422: the wait's schema refuses the payload).
   */
  sendEvent(taskId: string, name: string, payload: JsonValue): Promise<EventOutcome>;
  /** Closes the transport; never cancels tasks. */
  close(): Promise<void>;
}

/** The client's capabilities: elicitation when it answers input, the tasks extension unless turned off. */
function capabilitiesOf(options: CreateClientOptions): JsonObject {
  const capabilities: JsonObject = { ...(options.capabilities ?? {}) };
  if (options.onInput !== undefined && capabilities.elicitation === undefined) capabilities.elicitation = {};
  if (options.tasks !== false) {
    capabilities.extensions = {
      ...((capabilities.extensions as JsonObject | undefined) ?? {}),
      [TASKS_EXTENSION]: {},
    };
  }
  return capabilities;
}

/** Every tool (following cursors), noting the Mcp-Param-* headers of each; invalid ones are left out. */
async function listAllTools(
  request: Request,
  paramHeaders: Map<string, ParamHeader[]>,
): Promise<JsonObject[]> {
  const tools: JsonObject[] = [];
  let cursor: string | undefined;
  do {
    const page = await request('tools/list', cursor === undefined ? {} : { cursor });
    for (const tool of Array.isArray(page.tools) ? (page.tools as JsonObject[]) : []) {
      try {
        paramHeaders.set(String(tool.name), collectParamHeaders(tool.inputSchema));
        tools.push(tool);
      } catch {
        // An invalid x-mcp-header annotation: the tool is unusable over HTTP, so it is left out.
      }
    }
    cursor = typeof page.nextCursor === 'string' ? page.nextCursor : undefined;
  } while (cursor !== undefined);
  return tools;
}

export function createClient(options: CreateClientOptions): McpClient {
  if (options.transport === undefined && options.url === undefined)
    throw new Error('createClient needs a url or a transport');
  const paramHeaders = new Map<string, ParamHeader[]>();
  const transport =
    options.transport ??
    createHttpTransport({
      url: options.url as string,
      token: options.token,
      auth: options.auth,
      fetch: options.fetch,
      retry: options.retry,
      headers: (req) => ({ ...options.headers, ...mirrorParams(paramHeaders, req.method, req.params) }),
    });
  const server = options.url ?? transport.description;
  const capabilities = capabilitiesOf(options);
  const request = createRequester({
    transport,
    capabilities,
    clientInfo: options.clientInfo ?? { name: 'durable-mcp-client', version: VERSION },
    protocolVersion: options.protocolVersion ?? LATEST_PROTOCOL_VERSION,
  });
  const journalUpdate = (taskId: string, status: string): void => options.journal?.update(taskId, status);
  const taskClient = { request, onInput: options.onInput, journalUpdate };
  const calls: ToolCallDeps = { request, capabilities, server, taskClient, settings: options };

  return {
    request,
    discover: () => request('server/discover'),
    listTools: () => listAllTools(request, paramHeaders),
    callTool: (name, args = {}, opts = {}) => callTool(calls, name, args, opts),
    task: (taskId, tool) => new TaskHandle(taskClient, taskId, tool),
    resumeAll: () => resumeAll(calls),
    readStream: (taskId, name, offset) => readTaskStream(request, taskId, name, offset),
    followStream: (taskId, name, opts) => followTaskStream(request, taskId, name, opts),
    async sendEvent(taskId, name, payload) {
      if (options.url === undefined) throw new Error('client.sendEvent needs the client to have a url');
      const { token, auth, headers, fetch } = options;
      return postEvent(eventUrl(options.url, taskId, name), payload, { token, auth, headers, fetch });
    },
    close: () => transport.close(),
  };
}

/** Mcp-Param-* headers mirroring arguments the tool's schema marks with x-mcp-header (nulls omitted). */
function mirrorParams(
  known: Map<string, ParamHeader[]>,
  method: string,
  params: JsonObject,
): Record<string, string> {
  if (traitsOf(method)?.paramHeaders !== true || typeof params.name !== 'string') return {};
  const declared = known.get(params.name);
  if (declared === undefined) return {};
  const out: Record<string, string> = {};
  for (const p of declared) {
    let value: unknown = params.arguments;
    for (const key of p.path) value = isJsonObject(value) ? value[key] : undefined;
    if (value === undefined || value === null) continue;
    out[`mcp-param-${p.name.toLowerCase()}`] = encodeHeaderValue(String(value));
  }
  return out;
}
