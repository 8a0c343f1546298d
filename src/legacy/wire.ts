// The 2025-11-25 stateful Streamable HTTP wire on the shared endpoint: sessions, server→client requests, the GET
// stream and DELETE.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '../protocol/context.js';
import type { McpServer } from '../protocol/server.js';
import type { TaskStore } from '../tasks/store.js';
import { ErrorCode } from '../wire/codes.js';
import type { HeaderLookup } from '../wire/headers.js';
import {
  errorResponse,
  isJsonObject,
  notificationMessage,
  resultResponse,
  type IncomingRequest,
  type ParseOutcome,
} from '../wire/jsonrpc.js';
import { ProtocolError, toProtocolError } from '../wire/protocol-error.js';
import type { LegacyCall, LegacyContext } from './call.js';
import { createClientRequests } from './client-requests.js';
import { legacyVersionHeader, mayBeLegacy, SESSION_HEADER } from './era.js';
import { createSessionStreams, serveGetStream } from './get-stream.js';
import { initialize } from './initialize.js';
import { createMemorySessionStore } from './memory-sessions.js';
import { legacyMethods, unknownMethod } from './methods.js';
import { createSessionRegistry, type LegacySession } from './sessions.js';
import { LegacyResponse, sendStatus } from './stream.js';
import { answerInput, parseInputRequestId } from './task-input.js';

export type LegacyAuthOutcome =
  { ok: true; auth: AuthInfo } | { ok: false; status: number; challenge: string; message: string };

/** Settings of the legacy wire that embedders may change. */
export interface LegacyOptions {
  /** The task store: its sessions (any replica serves any session), tasks/list and change feed. */
  store?: TaskStore;
  /** Sessions end after this long without a request (default one hour). */
  sessionIdleMs?: number;
  /** How long one tasks/result waits for a terminal state before telling the client to call again (default 60 s). */
  resultWaitMs?: number;
  /** How long tasks/cancel waits for a running task to settle (default 5 s). */
  cancelWaitMs?: number;
  /** Tasks per tasks/list page (default 50). */
  pageSize?: number;
  /** The clock of session expiry and of the waits (default Date.now). */
  now?: () => number;
}

export interface LegacyEndpointOptions extends LegacyOptions {
  server: McpServer;
  authenticate(header: HeaderLookup): LegacyAuthOutcome | Promise<LegacyAuthOutcome>;
  keepAliveMs: number;
}

export interface LegacyEndpoint {
  /** Whether this POST may belong to the legacy wire (see era.ts); `handlePost` decides. */
  claims(parsed: ParseOutcome, header: HeaderLookup): boolean;
  /**
   * Serves a claimed POST. False (nothing written) when it named no session of the caller after all: the modern
   * path then answers it.
   */
  handlePost(
    req: IncomingMessage,
    res: ServerResponse,
    header: HeaderLookup,
    body: string,
    parsed: ParseOutcome,
  ): Promise<boolean>;
  /** Whether a GET or DELETE names a session (the only non-POST requests the legacy wire answers). */
  claimsSessionRequest(method: string | undefined, header: HeaderLookup): boolean;
  handleSessionRequest(req: IncomingMessage, res: ServerResponse, header: HeaderLookup): Promise<void>;
}

const rpcError = (id: IncomingRequest['id'] | null, code: number, message: string): string =>
  errorResponse(id, new ProtocolError(code, message));

const sessionNotFound = (res: ServerResponse, id: IncomingRequest['id'] | null): void =>
  sendStatus(res, 404, rpcError(id, ErrorCode.InvalidRequest, 'Session not found'));

function parseLoosely(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

export function createLegacyEndpoint(options: LegacyEndpointOptions): LegacyEndpoint {
  const { server } = options;
  const now = options.now ?? Date.now;
  const sessions = createSessionRegistry(
    options.store?.sessions ?? createMemorySessionStore(),
    options.sessionIdleMs,
  );
  const streams = createSessionStreams();
  const ctx: LegacyContext = {
    server,
    sessions,
    store: options.store,
    now,
    subscriptionsChanged: (session) => streams.changed(session),
    resultWaitMs: options.resultWaitMs ?? 60_000,
    cancelWaitMs: options.cancelWaitMs ?? 5_000,
    pageSize: options.pageSize ?? 50,
  };
  const canList = options.store?.listOwned !== undefined;
  const clientRequests = createClientRequests({ store: options.store?.sessions?.requests, now });
  const methods = legacyMethods();

  async function authenticate(res: ServerResponse, header: HeaderLookup): Promise<AuthInfo | undefined> {
    const outcome = await options.authenticate(header);
    if (outcome.ok) return outcome.auth;
    sendStatus(res, outcome.status, rpcError(null, ErrorCode.InvalidRequest, outcome.message), {
      'www-authenticate': outcome.challenge,
    });
    return undefined;
  }

  async function runRequest(
    req: IncomingMessage,
    res: ServerResponse,
    session: LegacySession,
    request: IncomingRequest,
    auth: AuthInfo,
  ): Promise<void> {
    const out = new LegacyResponse(res, options.keepAliveMs);
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    req.on('error', () => abort.abort());
    const call: LegacyCall = {
      ctx,
      server,
      session,
      id: request.id,
      method: request.method,
      params: request.params ?? {},
      auth,
      signal: abort.signal,
      emit: (method, params) => out.send(notificationMessage(method, params)),
      ask: (method, params) =>
        clientRequests.ask(session.id, (json) => out.send(json), method, params, abort.signal),
      sendRequest: (rid, method, params) =>
        out.send(JSON.stringify({ jsonrpc: '2.0', id: rid, method, params })),
    };
    const handler = Object.hasOwn(methods, request.method) ? methods[request.method] : undefined;
    let text: string;
    try {
      if (handler === undefined) throw unknownMethod(request.method);
      text = resultResponse(request.id, await handler(call));
    } catch (err) {
      text = errorResponse(request.id, toProtocolError(err));
    }
    out.finish(text);
  }

  /** A call of the endpoint itself on the caller's behalf (no response stream of its own). */
  function internalCall(session: LegacySession, auth: AuthInfo, req: IncomingMessage): LegacyCall {
    const abort = new AbortController();
    req.on('close', () => abort.abort());
    return {
      ctx,
      server,
      session,
      id: 'legacy-input-answer',
      method: 'tasks/update',
      params: {},
      auth,
      signal: abort.signal,
      emit: () => undefined,
      ask: () => Promise.reject(new Error('no response stream')),
      sendRequest: () => undefined,
    };
  }

  async function handleInitialize(res: ServerResponse, request: IncomingRequest, auth: AuthInfo) {
    try {
      const { session, result } = await initialize(server, sessions, request.params, auth, now(), canList);
      sendStatus(res, 200, resultResponse(request.id, result), { [SESSION_HEADER]: session.id });
    } catch (err) {
      sendStatus(res, 200, errorResponse(request.id, toProtocolError(err)));
    }
  }

  return {
    claims: mayBeLegacy,

    async handlePost(req, res, header, body, parsed) {
      try {
        return await servePost(req, res, header, body, parsed);
      } catch (err) {
        failed(res, err);
        return true;
      }
    },

    claimsSessionRequest: (method, header) =>
      (method === 'GET' || method === 'DELETE') &&
      header(SESSION_HEADER) !== undefined &&
      legacyVersionHeader(header),

    async handleSessionRequest(req, res, header) {
      try {
        await serveSessionRequest(req, res, header);
      } catch (err) {
        failed(res, err);
      }
    },
  };

  async function servePost(
    req: IncomingMessage,
    res: ServerResponse,
    header: HeaderLookup,
    body: string,
    parsed: ParseOutcome,
  ): Promise<boolean> {
    const isInitialize = parsed.ok && parsed.value.kind === 'request' && parsed.value.method === 'initialize';
    const sessionId = header(SESSION_HEADER);
    const auth = await authenticate(res, header);
    if (auth === undefined) return true;
    if (sessionId === undefined || isInitialize) {
      if (!parsed.ok || parsed.value.kind !== 'request') return false;
      await handleInitialize(res, parsed.value, auth);
      return true;
    }
    const found = await sessions.lookup(sessionId, auth, now());
    // Not a session of this caller (never was, purged, or someone else's): the modern path answers.
    if (found.kind === 'unknown') return false;
    const message = parsed.ok ? parsed.value : undefined;
    const id = message?.kind === 'request' ? message.id : null;
    if (found.kind === 'ended') {
      sessionNotFound(res, id);
      return true;
    }
    if (message === undefined) {
      // Clients answer server→client requests by POSTing the JSON-RPC response on their session.
      const answer = parseLoosely(body);
      if (!clientRequests.isResponse(answer)) {
        sendStatus(res, 400, parsed.ok ? undefined : errorResponse(parsed.id, parsed.error));
        return true;
      }
      const target = parseInputRequestId(answer.id);
      if (target === undefined) await clientRequests.answer(found.session.id, answer);
      else if (isJsonObject(answer.result)) {
        // A task's input: answered into the task, whichever replica asked. An error answer leaves it open.
        await answerInput(internalCall(found.session, auth, req), target, answer.result).catch(
          () => undefined,
        );
      }
      sendStatus(res, 202);
      return true;
    }
    if (message.kind === 'notification') sendStatus(res, 202);
    else await runRequest(req, res, found.session, message, auth);
    return true;
  }

  async function serveSessionRequest(req: IncomingMessage, res: ServerResponse, header: HeaderLookup) {
    const auth = await authenticate(res, header);
    if (auth === undefined) return;
    const sessionId = header(SESSION_HEADER) as string;
    const found = await sessions.lookup(sessionId, auth, now());
    if (found.kind !== 'live') {
      sessionNotFound(res, null);
      return;
    }
    if (req.method === 'DELETE') {
      await sessions.end(sessionId, auth, now());
      streams.end(sessionId);
      sendStatus(res, 200);
      return;
    }
    if (!/text\/event-stream|\*\/\*/i.test(header('accept') ?? '*/*')) {
      sendStatus(
        res,
        406,
        rpcError(null, ErrorCode.InvalidRequest, 'Not Acceptable: accept text/event-stream'),
      );
      return;
    }
    await serveGetStream({
      server,
      session: found.session,
      auth,
      res,
      keepAliveMs: options.keepAliveMs,
      streams,
    });
  }
}

/** A store or driver failure outside any request handler: a JSON-RPC error, or the stream cut. */
function failed(res: ServerResponse, err: unknown): void {
  const error = toProtocolError(err);
  if (res.headersSent) res.destroy();
  else sendStatus(res, error.code === ErrorCode.InternalError ? 500 : 503, errorResponse(null, error));
}
