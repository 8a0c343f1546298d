// The 2025-11-25 stateful Streamable HTTP wire, one of the HTTP edge's wires on the shared endpoint: sessions,
// server→client requests, the GET stream and DELETE.
import type { IncomingMessage } from 'node:http';
import type { HttpReply } from '../transport/http/reply.js';
import type { HttpWire, WireExchange, WirePost } from '../transport/http/wire.js';
import type { AuthInfo } from '../protocol/tool-types.js';
import type { McpServer } from '../protocol/server.js';
import type { SessionStore } from '../tasks/sessions.js';
import type { TaskStore } from '../tasks/store.js';
import { ErrorCode } from '../wire/codes.js';
import type { HeaderLookup } from '../wire/headers.js';
import { LATEST_PROTOCOL_VERSION } from '../wire/meta-keys.js';
import {
  errorResponse,
  isJsonObject,
  MAX_DEPTH,
  nestingExceeds,
  notificationMessage,
  requestIdOf,
  resultResponse,
  type IncomingRequest,
  type RequestId,
  type JsonObject,
} from '../wire/jsonrpc.js';
import { ProtocolError, toProtocolError } from '../wire/protocol-error.js';
import type { LegacyCall, LegacyContext } from './call.js';
import { createClientRequests, type ClientRequests } from './client-requests.js';
import { legacyVersionHeader, mayBeLegacy, SESSION_HEADER } from './era.js';
import { createSessionStreams, serveGetStream, type SessionStreams } from './get-stream.js';
import { initialize } from './initialize.js';
import { createMemorySessionStore } from './memory-sessions.js';
import { legacyMethods, unknownMethod } from './methods.js';
import { createSessionRegistry, type LegacySession, type SessionRegistry } from './sessions.js';
import { answerInput, parseInputRequestId } from './task-input.js';
import {
  parseWaitEventId,
  RESUME_RETRY_MS,
  WAIT_DONE_ID,
  WaitPaused,
  type ResumedWait,
} from './result-resume.js';

/** Settings of the legacy wire that embedders may change. */
export interface LegacyOptions {
  /** The task store: tasks/list and the change feed. */
  store?: TaskStore;
  /** Where sessions live: a backend's (any replica serves any session); without it, in this process only. */
  sessions?: SessionStore;
  /** Sessions end after this long without a request (default one hour). */
  sessionIdleMs?: number;
  /** Live sessions per principal; `initialize` beyond it is 429 (default 1000; 0 disables). */
  maxSessionsPerPrincipal?: number;
  /** How long one tasks/result waits for a terminal state before telling the client to call again (default 60 s). */
  resultWaitMs?: number;
  /** How long tasks/cancel waits for a running task to settle (default 5 s). */
  cancelWaitMs?: number;
  /** Tasks per tasks/list page (default 50). */
  pageSize?: number;
  /** The clock of session expiry and of the waits (default Date.now). */
  now?: () => number;
}

export interface LegacyWireOptions extends LegacyOptions {
  server: McpServer;
}

const rpcError = (id: IncomingRequest['id'] | null, code: number, message: string): string =>
  errorResponse(id, new ProtocolError(code, message), true);

const sessionNotFound = (reply: HttpReply, id: IncomingRequest['id'] | null): void =>
  reply.json(404, rpcError(id, ErrorCode.InvalidRequest, 'Session not found'));

/** A body that is no request (an answer to a server→client request), within the same depth limit as requests. */
function parseLoosely(body: string): unknown {
  if (nestingExceeds(body, MAX_DEPTH)) return undefined;
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** What every part of the legacy wire shares. */
interface Legacy {
  readonly server: McpServer;
  readonly now: () => number;
  readonly sessions: SessionRegistry;
  readonly streams: SessionStreams;
  readonly ctx: LegacyContext;
  readonly canList: boolean;
  readonly clientRequests: ClientRequests;
  readonly methods: ReturnType<typeof legacyMethods>;
  /** This process's requests in flight, by session and request id: what `notifications/cancelled` can stop. */
  readonly inFlight: Map<string, AbortController>;
}

/** Why a request's signal fired when the client cancelled it (rather than leaving). */
const CANCELLED = Symbol('cancelled by the client');

const flightKey = (sessionId: string, id: unknown): string => `${sessionId}\0${JSON.stringify(id)}`;

/** The legacy wire: a POST it claims but finds no session of the caller for is handed back to the modern core. */
export function createLegacyWire(options: LegacyWireOptions): HttpWire {
  const { server } = options;
  const now = options.now ?? Date.now;
  const sessions = createSessionRegistry(options.sessions ?? createMemorySessionStore(), {
    idleMs: options.sessionIdleMs,
    maxPerPrincipal: options.maxSessionsPerPrincipal,
  });
  const streams = createSessionStreams();
  const w: Legacy = {
    server,
    now,
    sessions,
    streams,
    ctx: {
      server,
      sessions,
      store: options.store,
      now,
      subscriptionsChanged: (session) => streams.changed(session),
      resultWaitMs: options.resultWaitMs ?? 60_000,
      cancelWaitMs: options.cancelWaitMs ?? 5_000,
      pageSize: options.pageSize ?? 50,
    },
    canList: options.store?.listOwned !== undefined,
    clientRequests: createClientRequests({ store: options.sessions?.requests, now }),
    methods: legacyMethods(),
    inFlight: new Map(),
  };
  return {
    claimsPost: mayBeLegacy,
    async servePost(post) {
      try {
        return await servePost(w, post);
      } catch (err) {
        failed(post.reply, err, requestIdOf(post.parsed));
        return true;
      }
    },
    claimsOther: (method, header) =>
      (method === 'GET' || method === 'DELETE') &&
      header(SESSION_HEADER) !== undefined &&
      legacyVersionHeader(header),
    async serveOther(exchange) {
      try {
        await serveSessionRequest(w, exchange);
      } catch (err) {
        failed(exchange.reply, err);
      }
    },
  };
}

/**
 * The headers of a request that sent routing headers, as the core checks them: the version header is the core's
 * own (the session negotiated 2025-11-25; the body is re-enveloped at the core's version).
 */
function routingOf(req: IncomingMessage, header: HeaderLookup): HeaderLookup | undefined {
  const routed = Object.keys(req.headers).some(
    (name) => name === 'mcp-method' || name === 'mcp-name' || name.startsWith('mcp-param-'),
  );
  if (!routed) return undefined;
  return (name) => (name === 'mcp-protocol-version' ? LATEST_PROTOCOL_VERSION : header(name));
}

async function runRequest(
  w: Legacy,
  req: IncomingMessage,
  out: HttpReply,
  session: LegacySession,
  request: IncomingRequest,
  auth: AuthInfo,
  header: HeaderLookup,
  resumed?: ResumedWait,
): Promise<void> {
  const res = out.res;
  // A resumed wait's stream always ends with the final event id, whatever ends it.
  let marked = resumed !== undefined;
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  req.on('error', () => abort.abort());
  const call: LegacyCall = {
    ctx: w.ctx,
    server: w.server,
    session,
    id: request.id,
    method: request.method,
    params: request.params ?? {},
    auth,
    signal: abort.signal,
    routing: routingOf(req, header),
    emit: (method, params) => out.send(notificationMessage(method, params)),
    ask: (method, params) =>
      w.clientRequests.ask(session.id, (json) => out.send(json), method, params, abort.signal),
    sendRequest: (rid, method, params) =>
      out.send(JSON.stringify({ jsonrpc: '2.0', id: rid, method, params })),
    follow: (rid, signal) => w.clientRequests.follow(session.id, rid, signal),
  };
  if (takesEvents(header)) {
    // A long call (a synchronous tool, a tasks/result wait) sends keep-alives rather than hold a balancer silently.
    out.limitSilence();
    call.resumable = {
      mark: (eventId) => {
        marked = true;
        out.mark(eventId);
      },
      asked: resumed?.asked ?? [],
    };
  }
  const handler = Object.hasOwn(w.methods, request.method) ? w.methods[request.method] : undefined;
  const key = flightKey(session.id, request.id);
  w.inFlight.set(key, abort);
  let text: string;
  try {
    if (handler === undefined) throw unknownMethod(request.method);
    text = resultResponse(request.id, await handler(call));
  } catch (err) {
    if (err instanceof WaitPaused) {
      out.pause(RESUME_RETRY_MS);
      return;
    }
    text = errorResponse(request.id, toProtocolError(err));
  } finally {
    if (w.inFlight.get(key) === abort) w.inFlight.delete(key);
  }
  if (abort.signal.reason === CANCELLED) {
    // A cancelled request gets no response (2025-11-25), but its HTTP exchange still ends: an empty stream, whose
    // last event id (if it had any) leaves nothing to resume.
    if (marked) out.mark(WAIT_DONE_ID);
    else out.start();
    out.end();
    return;
  }
  if (marked) {
    // The final event of a resumable stream: a reconnection from it finds nothing left to send.
    out.send(text, WAIT_DONE_ID);
    out.end();
    return;
  }
  out.finish(text);
}

/** Whether the client takes an event stream as the response (2025-11-25 clients accept both). */
const takesEvents = (header: HeaderLookup): boolean => /text\/event-stream/i.test(header('accept') ?? '');

/** `notifications/cancelled` for a request of the session running in this process: it stops, unanswered. */
function cancelInFlight(w: Legacy, sessionId: string, params: JsonObject | undefined): void {
  const requestId = params?.requestId;
  if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
  w.inFlight.get(flightKey(sessionId, requestId))?.abort(CANCELLED);
}
/** A call of the endpoint itself on the caller's behalf (no response stream of its own). */
function internalCall(w: Legacy, session: LegacySession, auth: AuthInfo, req: IncomingMessage): LegacyCall {
  const abort = new AbortController();
  req.on('close', () => abort.abort());
  return {
    ctx: w.ctx,
    server: w.server,
    session,
    id: 'legacy-input-answer',
    method: 'tasks/update',
    params: {},
    auth,
    signal: abort.signal,
    emit: () => undefined,
    ask: () => Promise.reject(new Error('no response stream')),
    sendRequest: () => undefined,
    follow: async () => undefined,
  };
}
async function handleInitialize(w: Legacy, reply: HttpReply, request: IncomingRequest, auth: AuthInfo) {
  try {
    const { session, result } = await initialize(
      w.server,
      w.sessions,
      request.params,
      auth,
      w.now(),
      w.canList,
    );
    reply.json(200, resultResponse(request.id, result), { [SESSION_HEADER]: session.id });
  } catch (err) {
    const error = toProtocolError(err);
    reply.json(error.code === ErrorCode.TooManyRequests ? 429 : 200, errorResponse(request.id, error));
  }
}
async function servePost(w: Legacy, { req, reply, header, body, parsed, auth }: WirePost): Promise<boolean> {
  const sessionId = header(SESSION_HEADER);
  const message = parsed.ok ? parsed.value : undefined;
  const id = message?.kind === 'request' ? message.id : null;
  if (message?.kind === 'request' && message.method === 'initialize') {
    await handleInitialize(w, reply, message, auth);
    return true;
  }
  if (sessionId === undefined) {
    if (!parsed.ok) return false;
    // The 2025-11-25 transport: a request other than initialize without the session's header is a bad request.
    reply.json(
      400,
      rpcError(id, ErrorCode.InvalidRequest, 'Bad Request: no Mcp-Session-Id header: send initialize first'),
    );
    return true;
  }
  const found = await w.sessions.lookup(sessionId, auth, w.now());
  // A body that is neither a message nor an answer, on no session of this caller: the modern path reports what is
  // wrong with it. An answer to a server→client request on such a session is 404, as any request.
  if (found.kind === 'unknown' && !parsed.ok && !w.clientRequests.isResponse(parseLoosely(body)))
    return false;
  // Not a live session of this caller (never was, ended, purged, or someone else's, alike): 404, as the 2025-11-25
  // transport requires, so that the client initializes again.
  if (found.kind !== 'live') {
    sessionNotFound(reply, id);
    return true;
  }
  if (message === undefined) {
    // Clients answer server→client requests by POSTing the JSON-RPC response on their session.
    const answer = parseLoosely(body);
    if (!w.clientRequests.isResponse(answer)) {
      reply.json(400, parsed.ok ? undefined : errorResponse(parsed.id, parsed.error, true));
      return true;
    }
    const target = parseInputRequestId(answer.id);
    if (target === undefined) await w.clientRequests.answer(found.session.id, answer);
    else if (isJsonObject(answer.result)) {
      // A task's input: answered into the task, whichever replica asked. An error answer leaves it open.
      const refused = await answerInput(internalCall(w, found.session, auth, req), target, answer.result);
      if (refused !== undefined) {
        // Not an answer to the question: the task keeps waiting, and the wait asks it again.
        await w.clientRequests.report(found.session.id, String(answer.id), { error: refused.toJSON() });
        reply.json(400, errorResponse(null, refused, true));
        return true;
      }
    }
    reply.json(202);
    return true;
  }
  if (message.kind === 'notification') {
    if (message.method === 'notifications/cancelled') cancelInFlight(w, found.session.id, message.params);
    reply.json(202);
  } else await runRequest(w, req, reply, found.session, message, auth, header);
  return true;
}
async function serveSessionRequest(w: Legacy, { req, reply, header, auth }: WireExchange) {
  const sessionId = header(SESSION_HEADER) as string;
  const found = await w.sessions.lookup(sessionId, auth, w.now());
  if (found.kind !== 'live') {
    sessionNotFound(reply, null);
    return;
  }
  if (req.method === 'DELETE') {
    await w.sessions.end(sessionId, auth, w.now());
    w.streams.end(sessionId);
    reply.json(200);
    return;
  }
  if (!/text\/event-stream|\*\/\*/i.test(header('accept') ?? '*/*')) {
    reply.json(406, rpcError(null, ErrorCode.InvalidRequest, 'Not Acceptable: accept text/event-stream'));
    return;
  }
  const resumed = parseWaitEventId(header('last-event-id'));
  if (resumed === 'done') {
    // That stream ended with its response: nothing to resume, and no new stream (a client that reconnects after
    // every final event would otherwise gather one per call). 405 is the transport's "no stream here".
    reply.json(405, rpcError(null, ErrorCode.InvalidRequest, 'That stream has ended: nothing to resume'), {
      allow: 'POST, DELETE',
    });
    return;
  }
  if (resumed !== undefined) {
    const request: IncomingRequest = {
      kind: 'request',
      id: resumed.requestId,
      method: 'tasks/result',
      params: { taskId: resumed.taskId },
    };
    // The wait goes on on this stream, which takes events whatever its Accept header said.
    const events: HeaderLookup = (name) => (name === 'accept' ? 'text/event-stream' : header(name));
    await runRequest(w, req, reply, found.session, request, auth, events, resumed);
    return;
  }
  await serveGetStream({ server: w.server, session: found.session, auth, reply, streams: w.streams });
}
/** A store or driver failure outside any request handler: a JSON-RPC error, or the stream cut. */
function failed(reply: HttpReply, err: unknown, id: RequestId | null = null): void {
  const error = toProtocolError(err);
  if (reply.res.headersSent) reply.res.destroy();
  else reply.json(error.code === ErrorCode.InternalError ? 500 : 503, errorResponse(id, error, true));
}
