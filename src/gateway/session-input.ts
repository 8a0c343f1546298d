// Requests a 2025-11-25 upstream sends during a call on its session (elicitation, sampling, roots), routed to the call
// they belong to, whose onInput answers them (UpstreamCallOptions). Over Streamable HTTP the server sends such a
// request on the response stream of its call: the session's fetch notes, for each request seen on a call's stream,
// that call's idempotency key. Over stdio (and on the session's GET stream) nothing on the wire says which call a
// request belongs to: it goes to the one call out on the session, if there is only one. A request that cannot be
// told to belong to exactly one call, or whose call cannot answer it, is refused with an error saying why.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CancelledNotificationSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { readMessage, SseParser } from '../client/sse-parser.js';
import type { InputRequest, InputResponse, JsonObject } from '../protocol/types.js';
import { isJsonObject } from '../wire/jsonrpc.js';
import { ProtocolError } from '../wire/protocol-error.js';
import {
  errorMessage,
  META_UPSTREAM_IDEMPOTENCY_KEY,
  UpstreamInputAbandonedError,
  type UpstreamCallOptions,
} from './upstream.js';

/** What the gateway's sessions declare: every call's caller may be able to answer these (see onInput). */
export const SESSION_CAPABILITIES = { elicitation: { form: {} }, sampling: {}, roots: {} };

type RequestId = string | number;

/** A call out on the session. */
interface OutCall {
  /** Its idempotency key (a gateway task's call), or null. */
  tag: string | null;
  onInput: UpstreamCallOptions['onInput'];
  onLog: UpstreamCallOptions['onLog'];
  /** Fires when the call has ended. */
  ended: AbortSignal;
}

/** Requests noted on calls' streams and not yet routed, at most (an upstream's requests no handler took are dropped). */
const MAX_NOTED = 1_000;

/** The calls out on one session, and which call's stream each upstream request came on. */
export function createSessionCalls() {
  const out = new Set<OutCall>();
  const origins = new Map<RequestId, string | null>();
  const waiting = new Map<RequestId, () => void>();
  return {
    /** `gaveUp` is called if the upstream cancels its request `id` while it is answered; the function returned stops that. */
    watch(id: RequestId, gaveUp: () => void): () => void {
      waiting.set(id, gaveUp);
      return () => {
        if (waiting.get(id) === gaveUp) waiting.delete(id);
      };
    },
    /** The upstream's notifications/cancelled for its request `id`. */
    cancelled(id: RequestId): void {
      waiting.get(id)?.();
    },
    /** A call goes out: `end` when it is over. */
    add(tag: string | null, onInput: OutCall['onInput'], onLog?: OutCall['onLog']): { end(): void } {
      const ended = new AbortController();
      const call: OutCall = { tag, onInput, onLog, ended: ended.signal };
      out.add(call);
      return {
        end() {
          out.delete(call);
          ended.abort(new Error('the call ended'));
        },
      };
    },
    /**
     * A log message of the upstream's: to the call tagged `tag` whose response stream it came on, or (`tag`
     * undefined: stdio) to the one call out, if there is only one; otherwise nobody's (dropped).
     */
    log(tag: string | null | undefined, params: JsonObject): void {
      if (typeof params.level !== 'string') return;
      const [only, ...others] = tag === undefined ? out : [...out].filter((c) => c.tag === tag);
      if (only === undefined || others.length > 0) return;
      only.onLog?.(params.level, params.data, typeof params.logger === 'string' ? params.logger : undefined);
    },
    /** The upstream's request `id` came on the response stream of a call tagged `tag` (null: untagged). */
    noteOrigin(id: RequestId, tag: string | null): void {
      if (origins.size >= MAX_NOTED) origins.clear();
      origins.set(id, tag);
    },
    /** The call the upstream's request `id` belongs to, or why none can be told. */
    route(id: RequestId): OutCall | string {
      const origin = origins.get(id);
      origins.delete(id);
      if (origin === null) return 'it came with a call that is not a gateway task';
      if (origin !== undefined)
        return [...out].find((c) => c.tag === origin) ?? 'the call it came with is no longer out';
      const [only, ...others] = out;
      if (only === undefined) return 'no call is out on this session';
      if (others.length > 0)
        return (
          `${out.size} calls are out on this session and nothing says which one it belongs to ` +
          '(a 2025-11-25 stdio upstream asks for input reliably with one call at a time per process: --upstream-pool)'
        );
      return only;
    },
  };
}

export type SessionCalls = ReturnType<typeof createSessionCalls>;

/** The tag of a POSTed JSON-RPC request (its idempotency key, or null), or undefined when the body is not one. */
function requestTag(init: RequestInit | undefined): { tag: string | null } | undefined {
  if (init?.method !== 'POST' || typeof init.body !== 'string') return undefined;
  let message: unknown;
  try {
    message = JSON.parse(init.body);
  } catch {
    return undefined;
  }
  if (!isJsonObject(message) || typeof message.method !== 'string' || message.id === undefined)
    return undefined;
  const meta = isJsonObject(message.params) ? message.params._meta : undefined;
  const key = isJsonObject(meta) ? meta[META_UPSTREAM_IDEMPOTENCY_KEY] : undefined;
  return { tag: typeof key === 'string' ? key : null };
}

/** The SSE bytes passed on unchanged, each server request seen in them noted as the call's. */
function noting(tag: string | null, calls: SessionCalls): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const parser = new SseParser();
  return new TransformStream({
    transform(chunk, controller) {
      for (const event of parser.push(decoder.decode(chunk, { stream: true }))) {
        // An event that is not JSON: the SDK reports it; nothing to note.
        const read = readMessage(event);
        const m = read?.ok === true ? read.message : undefined;
        if (!isJsonObject(m) || typeof m.method !== 'string') continue;
        if (typeof m.id === 'string' || typeof m.id === 'number') calls.noteOrigin(m.id, tag);
        else if (m.method === 'notifications/message' && isJsonObject(m.params)) calls.log(tag, m.params);
      }
      controller.enqueue(chunk);
    },
  });
}

/** `fetch` for a session's HTTP transport that notes which call's stream each upstream request came on. */
export function originNotingFetch(base: typeof fetch, calls: SessionCalls): typeof fetch {
  return async (input, init) => {
    const res = await base(input, init);
    const sent = requestTag(init);
    const sse = res.headers.get('content-type')?.toLowerCase().startsWith('text/event-stream') === true;
    if (sent === undefined || res.body === null || !sse) return res;
    return new Response(res.body.pipeThrough(noting(sent.tag, calls)), {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
}

/** The upstream's request as the gateway task asks it: its method and params, without its `_meta` and `task`. */
function inputRequest(method: InputRequest['method'], params: unknown): InputRequest {
  const { _meta: _dropped, task: _task, ...rest } = isJsonObject(params) ? params : {};
  return { method, params: rest as JsonObject } as InputRequest;
}

/** The answer of the call the request belongs to; an McpError the upstream gets when there is none. */
async function answer(
  calls: SessionCalls,
  method: InputRequest['method'],
  params: unknown,
  extra: { requestId: RequestId; signal: AbortSignal },
): Promise<InputResponse> {
  const call = calls.route(extra.requestId);
  if (typeof call === 'string')
    throw new McpError(ErrorCode.InvalidRequest, `the gateway cannot pass on this ${method}: ${call}`);
  if (call.onInput === undefined)
    throw new McpError(
      ErrorCode.InvalidRequest,
      `the gateway's caller cannot answer ${method} during this call: it is not a task (a call answered within ` +
        'its request cannot wait for input)',
    );
  const stop = new AbortController();
  const closed = (): void => stop.abort(new Error('the session closed'));
  const ended = (): void => stop.abort(call.ended.reason);
  extra.signal.addEventListener('abort', closed, { once: true });
  call.ended.addEventListener('abort', ended, { once: true });
  const unwatch = calls.watch(extra.requestId, () => stop.abort(new UpstreamInputAbandonedError(method)));
  try {
    if (extra.signal.aborted) closed();
    return await call.onInput(inputRequest(method, params), stop.signal);
  } catch (err) {
    if (err instanceof McpError) throw err;
    const code = err instanceof ProtocolError ? err.code : ErrorCode.InternalError;
    throw new McpError(code, errorMessage(err));
  } finally {
    unwatch();
    extra.signal.removeEventListener('abort', closed);
    call.ended.removeEventListener('abort', ended);
  }
}

const sessionCalls = new WeakMap<Client, SessionCalls>();

/**
 * Makes `client`'s session route the upstream's elicitation, sampling and roots requests to the calls they belong to
 * (its capabilities must be SESSION_CAPABILITIES); returns its calls, for its transport's fetch (originNotingFetch).
 */
export function acceptInput(client: Client, transport: 'http' | 'stdio'): SessionCalls {
  const calls = createSessionCalls();
  sessionCalls.set(client, calls);
  installInputHandlers(client, calls);
  // Over HTTP a call's log messages are taken from its response stream (originNotingFetch); over stdio here.
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    if (transport === 'stdio') calls.log(undefined, notification.params as JsonObject);
  });
  return calls;
}

/** Registers a call going out on `client`'s session; the function returned ends it. */
export function callOut(client: Client, call: UpstreamCallOptions): () => void {
  const calls = sessionCalls.get(client);
  if (calls === undefined) return () => undefined;
  const key = call.meta?.[META_UPSTREAM_IDEMPOTENCY_KEY];
  return calls.add(typeof key === 'string' ? key : null, call.onInput, call.onLog).end;
}

function installInputHandlers(client: Client, calls: SessionCalls): void {
  // In place of the SDK's own, which ignores a cancel of request id 0 (a falsy id), the first a server sends: an
  // answer in progress stops, and the call learns the upstream stopped waiting. (The SDK's handler would only abort
  // the signal it gives the request's handler, which stops nothing else here.)
  client.setNotificationHandler(CancelledNotificationSchema, (notification) => {
    const id = notification.params.requestId;
    if (typeof id === 'string' || typeof id === 'number') calls.cancelled(id);
  });
  client.setRequestHandler(
    ElicitRequestSchema,
    async (request, extra) => (await answer(calls, 'elicitation/create', request.params, extra)) as never,
  );
  client.setRequestHandler(
    CreateMessageRequestSchema,
    async (request, extra) => (await answer(calls, 'sampling/createMessage', request.params, extra)) as never,
  );
  client.setRequestHandler(
    ListRootsRequestSchema,
    async (request, extra) => (await answer(calls, 'roots/list', request.params, extra)) as never,
  );
}
