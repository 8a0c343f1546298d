// The 2025-11-25 stateful Streamable HTTP wire on the shared endpoint: sessions, server→client requests, DELETE.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '../protocol/context.js';
import type { McpServer } from '../protocol/server.js';
import { ErrorCode } from '../wire/codes.js';
import type { HeaderLookup } from '../wire/headers.js';
import {
  errorResponse,
  notificationMessage,
  resultResponse,
  type IncomingRequest,
  type ParseOutcome,
} from '../wire/jsonrpc.js';
import { ProtocolError, toProtocolError } from '../wire/protocol-error.js';
import type { LegacyCall } from './call.js';
import { createClientRequests } from './client-requests.js';
import { isLegacyMessage, SESSION_HEADER } from './era.js';
import { initialize } from './initialize.js';
import { legacyMethods, unknownMethod } from './methods.js';
import { createMemorySessions, type LegacySession, type SessionRegistry } from './sessions.js';
import { LegacyResponse, sendStatus } from './stream.js';
import { createMemoryTaskIndex } from './task-index.js';

export type LegacyAuthOutcome =
  { ok: true; auth: AuthInfo } | { ok: false; status: number; challenge: string; message: string };

export interface LegacyEndpointOptions {
  server: McpServer;
  authenticate(header: HeaderLookup): LegacyAuthOutcome | Promise<LegacyAuthOutcome>;
  keepAliveMs: number;
  sessions?: SessionRegistry;
  now?: () => number;
}

export interface LegacyEndpoint {
  /** Whether this POST belongs to the legacy wire (see era.ts). */
  claims(parsed: ParseOutcome, header: HeaderLookup): boolean;
  /** Whether a GET/DELETE names a session (the only non-POST requests the legacy wire answers). */
  claimsDelete(method: string | undefined, header: HeaderLookup): boolean;
  handlePost(
    req: IncomingMessage,
    res: ServerResponse,
    header: HeaderLookup,
    body: string,
    parsed: ParseOutcome,
  ): Promise<void>;
  handleDelete(res: ServerResponse, header: HeaderLookup): Promise<void>;
}

const rpcError = (id: IncomingRequest['id'] | null, code: number, message: string): string =>
  errorResponse(id, new ProtocolError(code, message));

export function createLegacyEndpoint(options: LegacyEndpointOptions): LegacyEndpoint {
  const { server } = options;
  const sessions = options.sessions ?? createMemorySessions();
  const now = options.now ?? Date.now;
  const clientRequests = createClientRequests();
  const methods = legacyMethods(createMemoryTaskIndex());

  async function authenticate(res: ServerResponse, header: HeaderLookup): Promise<AuthInfo | undefined> {
    const outcome = await options.authenticate(header);
    if (outcome.ok) return outcome.auth;
    sendStatus(res, outcome.status, rpcError(null, ErrorCode.InvalidRequest, outcome.message), {
      'www-authenticate': outcome.challenge,
    });
    return undefined;
  }

  /** The caller's session named by the header, or an HTTP error already sent (400 without one, 404 unknown). */
  async function sessionOf(
    res: ServerResponse,
    header: HeaderLookup,
    auth: AuthInfo,
    id: IncomingRequest['id'] | null,
  ): Promise<LegacySession | undefined> {
    const sessionId = header(SESSION_HEADER);
    if (sessionId === undefined) {
      sendStatus(
        res,
        400,
        rpcError(id, ErrorCode.InvalidRequest, 'Bad Request: Mcp-Session-Id header is required'),
      );
      return undefined;
    }
    const session = await sessions.get(sessionId, auth, now());
    if (session === undefined)
      sendStatus(res, 404, rpcError(id, ErrorCode.InvalidRequest, 'Session not found'));
    return session;
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
      server,
      sessions,
      session,
      id: request.id,
      method: request.method,
      params: request.params ?? {},
      auth,
      signal: abort.signal,
      emit: (method, params) => out.send(notificationMessage(method, params)),
      ask: (method, params) =>
        clientRequests.ask(session.id, (json) => out.send(json), method, params, abort.signal),
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

  return {
    claims: (parsed, header) => isLegacyMessage(parsed, header, sessions.known),
    claimsDelete: (method, header) => method === 'DELETE' && header(SESSION_HEADER) !== undefined,

    async handlePost(req, res, header, body, parsed) {
      const auth = await authenticate(res, header);
      if (auth === undefined) return;
      if (!parsed.ok) {
        // Clients answer server→client requests by POSTing the JSON-RPC response on their session.
        let message: unknown;
        try {
          message = JSON.parse(body);
        } catch {
          message = undefined;
        }
        if (clientRequests.isResponse(message)) {
          const session = await sessionOf(res, header, auth, null);
          if (session === undefined) return;
          clientRequests.answer(session.id, message);
          sendStatus(res, 202);
          return;
        }
        sendStatus(res, 400, errorResponse(parsed.id, parsed.error));
        return;
      }
      const message = parsed.value;
      if (message.kind === 'request' && message.method === 'initialize') {
        try {
          const { session, result } = await initialize(server, sessions, message.params, auth, now());
          sendStatus(res, 200, resultResponse(message.id, result), { [SESSION_HEADER]: session.id });
        } catch (err) {
          sendStatus(res, 200, errorResponse(message.id, toProtocolError(err)));
        }
        return;
      }
      const session = await sessionOf(res, header, auth, message.kind === 'request' ? message.id : null);
      if (session === undefined) return;
      if (message.kind === 'notification') {
        sendStatus(res, 202);
        return;
      }
      await runRequest(req, res, session, message, auth);
    },

    async handleDelete(res, header) {
      const auth = await authenticate(res, header);
      if (auth === undefined) return;
      const id = header(SESSION_HEADER) as string;
      const deleted = await sessions.delete(id, auth);
      sendStatus(res, deleted ? 200 : 404);
    },
  };
}
