// The HTTP edge of the MCP endpoint (node:http): routes, Host/Origin, method, media type and body limit; one
// authentication per request; then each configured wire (e.g. the 2025-11-25 one) may serve the request, and the
// 2026-07-28 core answers the rest. Every setting is fixed when the handler is built.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authenticator, AuthOutcome } from '../../auth/authenticator.js';
import type { AuditLog } from '../../protocol/audit.js';
import type { AuthInfo } from '../../protocol/tool-types.js';
import type { McpServer } from '../../protocol/server.js';
import { ErrorCode, httpStatusFor } from '../../wire/codes.js';
import { notModernVersionHeader, type HeaderLookup } from '../../wire/headers.js';
import { errorResponse, parseMessage, requestIdOf, type RequestId } from '../../wire/jsonrpc.js';
import { ProtocolError } from '../../wire/protocol-error.js';
import { BodyBudgetError, BodyTooLargeError, readBody, receiveBody, type BodyBudget } from './body.js';
import { answerRequest, HttpExchange } from './exchange.js';
import { checkOrigin, type OriginPolicy } from './origin-check.js';
import { HttpReply, type ResponseReport } from './reply.js';
import type { HttpWire, WirePost } from './wire.js';

export interface HttpEdgeOptions {
  server: McpServer;
  authenticator: Authenticator;
  origin: OriginPolicy;
  path?: string;
  maxBodyBytes?: number;
  keepAliveMs?: number;
  /** Audit sink for refused credentials. */
  audit?: AuditLog;
  /** OAuth Protected Resource Metadata (RFC 9728), served under /.well-known/oauth-protected-resource. */
  protectedResourceMetadata?: Record<string, unknown>;
  /** Called when a response has been sent: JSON-RPC method (or the path), HTTP status, duration. */
  onResponse?: ResponseReport;
  /** Extra routes (e.g. /metrics), offered every path but the endpoint's own; return true when handled. */
  extraRoutes?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** Other wires on the same endpoint, offered each request in order before the modern core. */
  wires?: readonly HttpWire[];
  /** Told of an error no request handler caught (the request got a 500, or its stream was cut). */
  onError?: (err: unknown) => void;
  /**
   * Readiness for `GET /readyz`: undefined when this process should get traffic, or why not (its store does not
   * answer, it is draining). Without it, `/readyz` answers as `/healthz`.
   */
  readiness?: () => Promise<string | undefined>;
  /**
   * Bytes that the bodies being read at once may hold together (default 64 MiB); a body that would go over is
   * refused with 503. Bodies are read only after the request's credentials were accepted.
   */
  maxBufferedBytes?: number;
}

export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => void;

const PRM_PATH = '/.well-known/oauth-protected-resource';

/** The handler's settings with their defaults, fixed at construction. */
interface Edge {
  readonly options: HttpEdgeOptions;
  readonly path: string;
  readonly maxBody: number;
  readonly keepAliveMs: number;
  readonly prm: string | undefined;
  readonly wires: readonly HttpWire[];
  readonly budget: BodyBudget;
  /** An error no request handler caught: `failed` for this edge (one function, not one per request). */
  readonly fail: (reply: HttpReply, err: unknown) => void;
}

/** JSON media types: application/json and application/*+json, with or without parameters. */
const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json\b/i;

const refuse = (reply: HttpReply, status: number, message: string, headers?: Record<string, string>): void =>
  reply.json(status, errorResponse(null, new ProtocolError(ErrorCode.InvalidRequest, message)), headers);

export function createHttpEdge(options: HttpEdgeOptions): HttpHandler {
  const edge: Edge = {
    fail: (reply, err) => failed(edge, reply, err),
    options,
    path: options.path ?? '/mcp',
    maxBody: options.maxBodyBytes ?? 4 * 1024 * 1024,
    keepAliveMs: options.keepAliveMs ?? 15_000,
    prm:
      options.protectedResourceMetadata === undefined
        ? undefined
        : JSON.stringify(options.protectedResourceMetadata),
    wires: options.wires ?? [],
    budget: { used: 0, max: options.maxBufferedBytes ?? 64 * 1024 * 1024 },
  };
  return (req, res) => {
    const url = req.url ?? '/';
    const reply = new HttpReply(res, edge.keepAliveMs, options.onResponse, url);
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    const probe = req.method === 'GET' || req.method === 'HEAD';
    // Liveness answers whatever Host a probe sends (it tells nothing else); every other route checks Host and Origin,
    // readiness included (it tells whether the store answers).
    if (pathname === '/healthz' && probe) {
      reply.json(200, '{"status":"ok"}');
      return;
    }
    const header: HeaderLookup = (name) => {
      const v = req.headers[name];
      return Array.isArray(v) ? v.join(', ') : v;
    };
    const forbidden = checkOrigin(options.origin, header('host'), header('origin'));
    if (forbidden !== undefined) {
      refuse(reply, 403, forbidden);
      req.resume();
      return;
    }
    if (pathname === '/readyz' && probe) {
      answerReadiness(options, reply);
      return;
    }
    if (servedRoute(edge, req, reply, pathname)) return;
    if (req.method !== 'POST') {
      serveOther(edge, req, reply, header);
      req.resume();
      return;
    }
    const contentType = header('content-type');
    if (
      contentType !== undefined &&
      contentType !== 'application/json' &&
      !JSON_TYPE.test(contentType.trim())
    ) {
      refuse(reply, 415, 'Unsupported Media Type: send application/json');
      req.resume();
      return;
    }
    // Credentials first, from the headers alone: nobody gets a body buffered before they are known.
    const outcome = options.authenticator.authenticate(header);
    if (outcome instanceof Promise)
      outcome.then(
        (o) => afterAuth(edge, req, reply, header, o),
        (err: unknown) => failed(edge, reply, err),
      );
    else afterAuth(edge, req, reply, header, outcome);
  };
}

function afterAuth(
  edge: Edge,
  req: IncomingMessage,
  reply: HttpReply,
  header: HeaderLookup,
  outcome: AuthOutcome,
): void {
  if (!outcome.ok) {
    refuseUnauthenticated(edge, req, reply, header, outcome);
    return;
  }
  receiveBody(
    req,
    edge.maxBody,
    edge.budget,
    (body) => servePost(edge, req, reply, header, body, outcome.auth),
    (err: unknown) => {
      if (err instanceof BodyBudgetError) refuse(reply, 503, err.message, { 'retry-after': '1' });
      else if (err instanceof BodyTooLargeError) refuse(reply, 413, err.message);
      else refuse(reply, 400, 'Invalid request body');
      if (err instanceof BodyTooLargeError || err instanceof BodyBudgetError) req.destroy();
    },
  );
}

/** `/readyz`: 200 when ready, 503 with the reason otherwise (a failing check counts as not ready). */
function answerReadiness(options: HttpEdgeOptions, reply: HttpReply): void {
  const check = options.readiness?.() ?? Promise.resolve(undefined);
  check.then(
    (reason) =>
      reason === undefined
        ? reply.json(200, '{"status":"ready"}')
        : reply.json(503, JSON.stringify({ status: 'not ready', reason }), { 'retry-after': '1' }),
    // The check's own failure stays in the process: a probe learns only that it is not ready.
    () => reply.json(503, '{"status":"not ready","reason":"check failed"}'),
  );
}

/** What is kept of a client-chosen name in logs and audit lines. */
const bounded = (text: string | undefined): string =>
  text === undefined ? '' : text.length > 100 ? `${text.slice(0, 100)}…` : text;

/**
 * Refused credentials: 401 with the request's id when a small body shows it within a second, without buffering a large
 * one or waiting for a slow one (then the connection closes).
 */
function refuseUnauthenticated(
  edge: Edge,
  req: IncomingMessage,
  reply: HttpReply,
  header: HeaderLookup,
  outcome: Extract<AuthOutcome, { ok: false }>,
): void {
  edge.options.audit?.({
    event: 'auth.denied',
    method: bounded(header('mcp-method') ?? reply.method),
    outcome: bounded(outcome.message),
  });
  const answer = (id: RequestId | null, close: boolean): void => {
    const headers: Record<string, string> = { 'www-authenticate': outcome.challenge };
    if (close) headers.connection = 'close';
    reply.json(
      outcome.status,
      errorResponse(
        id,
        new ProtocolError(ErrorCode.InvalidRequest, outcome.message),
        notModernVersionHeader(header),
      ),
      headers,
    );
    if (close) reply.res.once('finish', () => req.destroy());
  };
  const length = Number(header('content-length') ?? NaN);
  if (!(length <= UNAUTHENTICATED_BODY_BYTES)) {
    answer(null, true);
    return;
  }
  // A body that does not come at once is not waited for: without credentials nobody holds a connection busy.
  let answered = false;
  const once = (id: RequestId | null, close: boolean): void => {
    if (answered) return;
    answered = true;
    clearTimeout(late);
    answer(id, close);
  };
  const late = setTimeout(() => once(null, true), UNAUTHENTICATED_BODY_MS);
  readBody(req, UNAUTHENTICATED_BODY_BYTES).then(
    (body) => once(requestIdOf(parseMessage(body)), false),
    () => once(null, true),
  );
}

/** The most of an unauthenticated body read, to echo its request id, and how long it is waited for. */
const UNAUTHENTICATED_BODY_BYTES = 8 * 1024;
const UNAUTHENTICATED_BODY_MS = 1_000;

/** Routes other than the endpoint: OAuth metadata, extra routes (e.g. /metrics), 404. True when answered. */
function servedRoute(edge: Edge, req: IncomingMessage, reply: HttpReply, pathname: string): boolean {
  if (
    edge.prm !== undefined &&
    (pathname === PRM_PATH || pathname === `${PRM_PATH}${edge.path}`) &&
    req.method === 'GET'
  ) {
    reply.json(200, edge.prm, { 'cache-control': 'max-age=300' });
    return true;
  }
  // The endpoint's own path, the common case, is never an extra route's: they are offered every other path.
  if (pathname === edge.path) return false;
  if (edge.options.extraRoutes?.(req, reply.res) === true) return true;
  reply.json(404, NOT_FOUND_BODY);
  return true;
}

/** The answer to a path that is not served (the operator API's too, when it is not configured). */
export const NOT_FOUND_BODY = '{"error":{"code":"not_found","message":"Not found"}}';

/** Authenticates the request once for whichever wire serves it; answers 401 (with the request's id) otherwise. */
async function authenticate(
  edge: Edge,
  reply: HttpReply,
  header: HeaderLookup,
  id: RequestId | null,
): Promise<AuthInfo | undefined> {
  const outcome = await edge.options.authenticator.authenticate(header);
  if (outcome.ok) return outcome.auth;
  edge.options.audit?.({
    event: 'auth.denied',
    method: bounded(reply.method),
    outcome: bounded(outcome.message),
  });
  reply.json(
    outcome.status,
    errorResponse(
      id,
      new ProtocolError(ErrorCode.InvalidRequest, outcome.message),
      notModernVersionHeader(header),
    ),
    {
      'www-authenticate': outcome.challenge,
    },
  );
  return undefined;
}

/** GET, DELETE …: a wire's (e.g. a legacy session stream), or 405. */
function serveOther(edge: Edge, req: IncomingMessage, reply: HttpReply, header: HeaderLookup): void {
  const wire = edge.wires.find((w) => w.claimsOther?.(req.method, header) === true);
  if (wire?.serveOther === undefined) {
    refuse(reply, 405, 'Method not allowed: use POST', { allow: 'POST' });
    return;
  }
  const serve = wire.serveOther.bind(wire);
  authenticate(edge, reply, header, null)
    .then((auth) => (auth === undefined ? undefined : serve({ req, reply, header, auth })))
    .catch((err: unknown) => failed(edge, reply, err));
}

/** Last resort for an error that escaped every handler: this request fails, the server goes on. */
function failed(edge: Edge, reply: HttpReply, err: unknown): void {
  edge.options.onError?.(err);
  if (reply.res.headersSent) reply.res.destroy();
  else reply.json(500, errorResponse(null, new ProtocolError(ErrorCode.InternalError, 'Internal error')));
}

/**
 * One POST with its body: offered to the wires in order, then answered by the modern core. Not an async function: a
 * request no wire claims (the common case) waits on no promise of its own here.
 */
function servePost(
  edge: Edge,
  req: IncomingMessage,
  reply: HttpReply,
  header: HeaderLookup,
  body: string,
  auth: AuthInfo,
): void {
  try {
    const parsed = parseMessage(body);
    if (parsed.ok) reply.method = parsed.value.method;
    offerWires(edge, 0, { req, reply, header, auth, body, parsed });
  } catch (err) {
    failed(edge, reply, err);
  }
}

/** Offers the POST to the wires from `from` on; the first that serves it answers, else the modern core. */
function offerWires(edge: Edge, from: number, post: WirePost): void {
  for (let i = from; i < edge.wires.length; i++) {
    const wire = edge.wires[i]!;
    if (!wire.claimsPost(post.parsed, post.header)) continue;
    wire.servePost(post).then(
      (served) => {
        if (!served) offerWires(edge, i + 1, post);
      },
      (err: unknown) => failed(edge, post.reply, err),
    );
    return;
  }
  serveModern(edge, post);
}

/** The modern (2026-07-28) core's answer to a POST no wire served. */
function serveModern(edge: Edge, { req, reply, header, auth, parsed }: WirePost): void {
  if (!parsed.ok) {
    reply.json(httpStatusFor(parsed.error.code, 'envelope'), errorResponse(parsed.id, parsed.error));
    return;
  }
  const message = parsed.value;
  if (message.kind === 'notification') reply.json(202);
  // Not awaited: a long answer (a stream) holds neither this frame, the body and its parse, nor a promise.
  else
    answerRequest(
      edge.options.server,
      new HttpExchange(req, reply, message, auth, header),
      header,
      edge.fail,
    );
}
