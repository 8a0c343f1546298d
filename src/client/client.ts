// The durable-mcp client: full envelope on every request, MRTR rounds, tasks as handles, an optional journal.
import { collectParamHeaders, type ParamHeader } from '../wire/param-headers.js';
import { encodeHeaderValue } from '../wire/headers.js';
import { isJsonObject, type JsonObject, type RequestId } from '../wire/jsonrpc.js';
import {
  LATEST_PROTOCOL_VERSION,
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_IDEMPOTENCY_KEY,
  META_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  TASKS_EXTENSION,
} from '../wire/meta-keys.js';
import { VERSION } from '../version.js';
import { InputRequiredError, InvalidResponseError, McpRpcError } from './errors.js';
import { createHttpTransport } from './http-transport.js';
import type { Journal, PendingCall } from './journal.js';
import { newIdempotencyKey } from './idempotency-key.js';
import { TaskHandle, type InputHandler } from './task-handle.js';
import type { ClientTransport } from './transport.js';

export interface CreateClientOptions {
  /** Streamable HTTP endpoint; or give a `transport` (e.g. createStdioTransport). */
  url?: string;
  transport?: ClientTransport;
  token?: string | (() => string | Promise<string>);
  clientInfo?: { name: string; version: string };
  /** Extra client capabilities; elicitation is declared when `onInput` is given, the tasks extension unless `tasks: false`. */
  capabilities?: JsonObject;
  tasks?: boolean;
  /** Answers input requests (MRTR rounds and task input). Without it, input requests raise InputRequiredError. */
  onInput?: InputHandler;
  journal?: Journal;
  protocolVersion?: string;
  fetch?: typeof fetch;
  /** Most MRTR rounds for one call before giving up (default 16). */
  maxRounds?: number;
  /**
   * How many times a tools/call whose answer was lost (the connection failed, or a proxy answered instead of the
   * server) is sent again, with the same idempotency key, before the error is thrown (default 2). A task is never
   * created twice this way; a tool that runs without a task may run again, as with any repeated request.
   */
  callRetries?: number;
  /** Wait before the first such retry, doubled for each next one (default 250 ms). */
  callRetryDelayMs?: number;
}

/** Options of one tools/call. */
export interface CallOptions extends RequestOptions {
  onInput?: InputHandler;
  /**
   * The call's idempotency key (default: a new random one for each call that declares the tasks extension). Reuse a
   * key to reach the task an earlier call with it created (same tool and arguments) instead of creating another.
   */
  idempotencyKey?: string;
}

export type CallResult = { kind: 'result'; result: JsonObject } | { kind: 'task'; task: TaskHandle };

export interface RequestOptions {
  signal?: AbortSignal;
  onNotification?: (message: JsonObject) => void;
  /** Capabilities for this request only (replacing the client's). */
  capabilities?: JsonObject;
  /** Extra `_meta` keys (e.g. progressToken). */
  meta?: JsonObject;
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
   * Handles for every unfinished task in the journal for this server. Calls the journal recorded as sent but never
   * answered (the client stopped, or every retry failed) are sent again first, with their idempotency keys: each
   * gets the task it created, if it created one, and never a second one.
   */
  resumeAll(): Promise<TaskHandle[]>;
  /** Closes the transport; never cancels tasks. */
  close(): Promise<void>;
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
      fetch: options.fetch,
      headers: (req) => mirrorParams(paramHeaders, req.method, req.params),
    });
  const server = options.url ?? transport.description;
  let version = options.protocolVersion ?? LATEST_PROTOCOL_VERSION;
  const clientInfo = options.clientInfo ?? { name: 'durable-mcp-client', version: VERSION };
  let nextId = 1;
  const newId = (): RequestId => nextId++;

  const capabilities: JsonObject = { ...(options.capabilities ?? {}) };
  if (options.onInput !== undefined && capabilities.elicitation === undefined) capabilities.elicitation = {};
  if (options.tasks !== false) {
    capabilities.extensions = {
      ...((capabilities.extensions as JsonObject | undefined) ?? {}),
      [TASKS_EXTENSION]: {},
    };
  }

  async function request(
    method: string,
    params: JsonObject = {},
    opts: RequestOptions = {},
  ): Promise<JsonObject> {
    for (let attempt = 0; ; attempt++) {
      const meta: JsonObject = {
        ...opts.meta,
        [META_PROTOCOL_VERSION]: version,
        [META_CLIENT_CAPABILITIES]: opts.capabilities ?? capabilities,
      };
      meta[META_CLIENT_INFO] = clientInfo;
      const reply = await transport.send(
        { id: newId(), method, params: { ...params, _meta: meta } },
        { signal: opts.signal, onNotification: opts.onNotification },
      );
      const { message } = reply;
      if (isJsonObject(message.error)) {
        const e = message.error;
        const err = new McpRpcError(Number(e.code), String(e.message), e.data, reply.status);
        // Version negotiation: retry once with a version both sides speak.
        if (err.code === -32022 && attempt === 0) {
          const offered =
            isJsonObject(err.data) && Array.isArray(err.data.supported) ? err.data.supported : [];
          const common = SUPPORTED_PROTOCOL_VERSIONS.find((v) => offered.includes(v));
          if (common !== undefined) {
            version = common;
            continue;
          }
        }
        throw err;
      }
      if (!isJsonObject(message.result))
        throw new InvalidResponseError(`response to ${method} has no result`);
      return message.result;
    }
  }

  const journalUpdate = (taskId: string, status: string): void => options.journal?.update(taskId, status);
  const taskClient = { request, onInput: options.onInput, journalUpdate };

  /** True for a failure that may have lost the answer (not a JSON-RPC error, not the caller's own abort). */
  const answerLost = (err: unknown, signal: AbortSignal | undefined): boolean =>
    !(err instanceof McpRpcError) && signal?.aborted !== true;

  /** Sends a tools/call, again after a lost answer (same body, so the same idempotency key). */
  async function sendCall(params: JsonObject, opts: RequestOptions): Promise<JsonObject> {
    const retries = options.callRetries ?? 2;
    for (let attempt = 0; ; attempt++) {
      try {
        return await request('tools/call', params, opts);
      } catch (err) {
        if (attempt >= retries || !answerLost(err, opts.signal)) throw err;
        await new Promise((r) => setTimeout(r, (options.callRetryDelayMs ?? 250) * 2 ** attempt));
      }
    }
  }

  async function callTool(name: string, args: JsonObject = {}, opts: CallOptions = {}): Promise<CallResult> {
    const onInput = opts.onInput ?? options.onInput;
    const caps = opts.capabilities ?? capabilities;
    const declared = isJsonObject(caps.extensions) && caps.extensions[TASKS_EXTENSION] !== undefined;
    // A call that may create a task carries a key, journaled before it is sent: a lost answer or a crash of this
    // process then leads back to that task instead of a second one.
    const key = opts.idempotencyKey ?? (declared ? newIdempotencyKey() : undefined);
    const meta: JsonObject =
      key === undefined ? { ...opts.meta } : { ...opts.meta, [META_IDEMPOTENCY_KEY]: key };
    const callOpts: RequestOptions = { ...opts, meta };
    if (key !== undefined)
      options.journal?.beginCall?.({ idempotencyKey: key, server, tool: name, args, createdAt: Date.now() });
    let extra: JsonObject = {};
    let lost = false;
    try {
      for (let round = 0; round < (options.maxRounds ?? 16); round++) {
        const result = await sendCall({ name, arguments: args, ...extra }, callOpts).catch((err: unknown) => {
          lost = answerLost(err, opts.signal);
          throw err;
        });
        const type = result.resultType ?? 'complete';
        if (type === 'complete') {
          settle(key);
          return { kind: 'result', result };
        }
        if (type === 'task') {
          if (!declared || typeof result.taskId !== 'string')
            throw new InvalidResponseError('unexpected task result');
          options.journal?.record({
            taskId: result.taskId,
            server,
            tool: name,
            createdAt: Date.now(),
            status: String(result.status),
            ...(key === undefined ? {} : { idempotencyKey: key }),
          });
          settle(key);
          return { kind: 'task', task: new TaskHandle(taskClient, result.taskId, name) };
        }
        if (type !== 'input_required') throw new InvalidResponseError(`unknown resultType "${String(type)}"`);
        const requests = isJsonObject(result.inputRequests)
          ? (result.inputRequests as Record<string, JsonObject>)
          : {};
        let answers: Record<string, JsonObject> = {};
        if (Object.keys(requests).length > 0) {
          if (onInput === undefined) throw new InputRequiredError(requests);
          answers = await onInput(requests, { tool: name });
        }
        // A retry is a new request (new id) carrying the answers and the state exactly as received.
        extra = { inputResponses: answers };
        if (typeof result.requestState === 'string') extra.requestState = result.requestState;
      }
    } catch (err) {
      // Only a lost answer leaves the call pending (for resumeAll); any answer, even an error, settles it.
      if (!lost) settle(key);
      throw err;
    }
    settle(key);
    throw new InvalidResponseError(`tools/call ${name}: more than ${options.maxRounds ?? 16} input rounds`);
  }

  const settle = (key: string | undefined): void => {
    if (key !== undefined) options.journal?.endCall?.(key);
  };

  /** Sends a call the journal kept as pending again; its task's handle, if it made one. */
  async function resumeCall(call: PendingCall): Promise<TaskHandle | undefined> {
    try {
      const outcome = await callTool(call.tool, call.args as JsonObject, {
        idempotencyKey: call.idempotencyKey,
      });
      return outcome.kind === 'task' ? outcome.task : undefined;
    } catch (err) {
      if (err instanceof McpRpcError || err instanceof InputRequiredError) return undefined;
      throw err;
    }
  }

  return {
    request,
    discover: () => request('server/discover'),
    async listTools() {
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
    },
    callTool,
    task: (taskId, tool) => new TaskHandle(taskClient, taskId, tool),
    async resumeAll() {
      for (const call of options.journal?.pendingCalls?.(server) ?? []) await resumeCall(call);
      return (options.journal?.unfinished(server) ?? []).map(
        (e) => new TaskHandle(taskClient, e.taskId, e.tool),
      );
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
  if (method !== 'tools/call' || typeof params.name !== 'string') return {};
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
