// Streamable HTTP (2026-07-28) for node:http: one JSON-RPC message per POST, JSON or SSE responses.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Authenticator } from '../../auth/authenticator.js';
import type { DispatchInput, McpServer } from '../../protocol/server.js';
import type { AuthInfo } from '../../protocol/context.js';
import type { AuditLog } from '../../protocol/audit.js';
import { ErrorCode, httpStatusFor } from '../../wire/codes.js';
import type { HeaderLookup } from '../../wire/headers.js';
import {
  errorResponse,
  notificationMessage,
  parseMessage,
  resultResponse,
  type IncomingRequest,
  type JsonObject,
} from '../../wire/jsonrpc.js';
import { ProtocolError } from '../../wire/protocol-error.js';
import { createLegacyEndpoint, type LegacyEndpoint, type LegacyOptions } from '../../legacy/endpoint.js';
import { checkOrigin, type OriginPolicy } from './origin-check.js';
import { SseStream } from './sse.js';

export interface HttpHandlerOptions {
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
  onResponse?: (method: string, status: number, durationMs: number) => void;
  /** Extra routes (e.g. /metrics); return true when handled. */
  extraRoutes?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** The 2025-11-25 wire: give it the task store so that sessions and tasks/list are shared by every replica. */
  legacy?: LegacyOptions;
}

export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => void;

const PRM_PATH = '/.well-known/oauth-protected-resource';

function sendJson(
  res: ServerResponse,
  status: number,
  body: string,
  extra: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  };
  for (const key in extra) headers[key] = extra[key] as string;
  res.writeHead(status, headers);
  res.end(body);
  reportResponse(res, status);
}

function sendError(
  res: ServerResponse,
  status: number,
  id: string | number | null,
  code: number,
  message: string,
): void {
  sendJson(res, status, errorResponse(id, new ProtocolError(code, message)));
}

export function createHttpHandler(options: HttpHandlerOptions): HttpHandler {
  const path = options.path ?? '/mcp';
  const maxBody = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  const prm =
    options.protectedResourceMetadata === undefined
      ? undefined
      : JSON.stringify(options.protectedResourceMetadata);
  // The 2025-11-25 stateful wire on the same endpoint (src/legacy/); it reads the authenticator on each request.
  const legacy = createLegacyEndpoint({
    server: options.server,
    authenticate: (h) => options.authenticator.authenticate(h),
    keepAliveMs,
    ...options.legacy,
  });

  return (req, res) => {
    if (options.onResponse !== undefined) {
      const tracked = res as Tracked;
      tracked.mcpStarted = performance.now();
      tracked.mcpReport = options.onResponse;
      tracked.mcpMethod = req.url ?? '/';
    }
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    if (pathname === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) {
      sendJson(res, 200, '{"status":"ok"}');
      return;
    }
    if (
      prm !== undefined &&
      (pathname === PRM_PATH || pathname === `${PRM_PATH}${path}`) &&
      req.method === 'GET'
    ) {
      sendJson(res, 200, prm, { 'cache-control': 'max-age=300' });
      return;
    }
    if (options.extraRoutes?.(req, res) === true) return;
    if (pathname !== path) {
      sendJson(res, 404, '{"error":"not found"}');
      return;
    }
    const header: HeaderLookup = (name) => {
      const v = req.headers[name];
      return Array.isArray(v) ? v.join(', ') : v;
    };
    const forbidden = checkOrigin(options.origin, header('host'), header('origin'));
    if (forbidden !== undefined) {
      sendError(res, 403, null, ErrorCode.InvalidRequest, forbidden);
      req.resume();
      return;
    }
    if (legacy.claimsSessionRequest(req.method, header)) {
      void legacy.handleSessionRequest(req, res, header);
      req.resume();
      return;
    }
    if (req.method !== 'POST') {
      sendJson(
        res,
        405,
        errorResponse(null, new ProtocolError(ErrorCode.InvalidRequest, 'Method not allowed: use POST')),
        {
          allow: 'POST',
        },
      );
      req.resume();
      return;
    }
    const contentType = header('content-type');
    if (contentType !== undefined && !/^application\/(?:[\w.+-]*\+)?json\b/i.test(contentType.trim())) {
      sendError(res, 415, null, ErrorCode.InvalidRequest, 'Unsupported Media Type: send application/json');
      req.resume();
      return;
    }
    readBody(req, maxBody).then(
      (body) => void handleBody(options, legacy, keepAliveMs, req, res, header, body),
      (err: unknown) => {
        const tooLarge = err instanceof BodyTooLargeError;
        sendError(
          res,
          tooLarge ? 413 : 400,
          null,
          ErrorCode.InvalidRequest,
          tooLarge ? err.message : 'Invalid request body',
        );
        if (tooLarge) req.destroy();
      },
    );
  };
}

class BodyTooLargeError extends Error {}

/** Responses carry their start time and the reporter, set once per request (no listener on the hot path). */
type Tracked = ServerResponse & {
  mcpStarted?: number;
  mcpMethod?: string;
  mcpReport?: (method: string, status: number, durationMs: number) => void;
};

function reportResponse(res: ServerResponse, status: number): void {
  const t = res as Tracked;
  const report = t.mcpReport;
  if (report === undefined) return;
  t.mcpReport = undefined;
  report(t.mcpMethod ?? '', status, performance.now() - (t.mcpStarted ?? 0));
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function readBody(req: IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        reject(new BodyTooLargeError(`Request body exceeds ${max} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      const buf = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      try {
        resolve(UTF8.decode(buf));
      } catch {
        resolve('\u0000invalid-utf8');
      }
    });
    req.on('error', reject);
  });
}

/**
 * One POST's dispatch input. A class rather than an object literal: a literal with a getter (the lazy `signal`)
 * gets a hidden class of its own on every evaluation, allocated where only full collections free it, which under
 * load costs more than the request itself.
 */
class HttpExchange implements DispatchInput {
  /** Created only if a handler asks for the signal: most requests never do. */
  private abort: AbortController | undefined;
  sse: SseStream | undefined;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    readonly request: IncomingRequest,
    readonly auth: AuthInfo,
    readonly header: HeaderLookup,
    private readonly keepAliveMs: number,
  ) {}

  /** The client went away before the response was finished. */
  private gone(): boolean {
    const res = this.res;
    return !res.writableFinished && (res.destroyed || this.req.socket.destroyed);
  }

  aborted(): boolean {
    return this.abort?.signal.aborted === true || this.gone();
  }

  get signal(): AbortSignal {
    if (this.abort === undefined) {
      const controller = new AbortController();
      this.abort = controller;
      const res = this.res;
      if (this.gone()) controller.abort();
      else
        res.on('close', () => {
          if (!res.writableFinished) controller.abort();
        });
    }
    return this.abort.signal;
  }

  emit(method: string, params: JsonObject): void {
    if (this.aborted()) return;
    if (this.sse === undefined) {
      const res = this.res;
      this.sse = new SseStream(res, this.keepAliveMs);
      // A stream ends whenever the handler or the client ends it: report then.
      res.once('close', () => reportResponse(res, 200));
    }
    this.sse.send(notificationMessage(method, params));
  }

  whenWritable(): Promise<void> {
    const res = this.res;
    return res.writableNeedDrain && !this.gone()
      ? new Promise<void>((resolve) => {
          res.once('drain', resolve);
          res.once('close', resolve);
        })
      : Promise.resolve();
  }
}

async function handleBody(
  options: HttpHandlerOptions,
  legacy: LegacyEndpoint,
  keepAliveMs: number,
  req: IncomingMessage,
  res: ServerResponse,
  header: HeaderLookup,
  body: string,
): Promise<void> {
  const parsed = parseMessage(body);
  if (legacy.claims(parsed, header) && (await legacy.handlePost(req, res, header, body, parsed))) return;
  if (!parsed.ok) {
    sendJson(res, httpStatusFor(parsed.error.code, 'envelope'), errorResponse(parsed.id, parsed.error));
    return;
  }
  const message = parsed.value;
  (res as Tracked).mcpMethod = message.method;
  const authOutcome = await options.authenticator.authenticate(header);
  if (!authOutcome.ok) {
    options.audit?.({ event: 'auth.denied', method: message.method, outcome: authOutcome.message });
    const id = message.kind === 'request' ? message.id : null;
    sendJson(
      res,
      authOutcome.status,
      errorResponse(id, new ProtocolError(ErrorCode.InvalidRequest, authOutcome.message)),
      {
        'www-authenticate': authOutcome.challenge,
      },
    );
    return;
  }
  if (message.kind === 'notification') {
    res.writeHead(202).end();
    reportResponse(res, 202);
    return;
  }
  const exchange = new HttpExchange(req, res, message, authOutcome.auth, header, keepAliveMs);
  let outcome;
  try {
    outcome = await options.server.dispatch(exchange);
  } catch {
    outcome = {
      ok: false as const,
      error: new ProtocolError(ErrorCode.InternalError, 'Internal error'),
      origin: 'handler' as const,
    };
  }
  if (exchange.aborted()) {
    exchange.sse?.stop();
    return;
  }
  const sse = exchange.sse;
  const text = outcome.ok
    ? resultResponse(message.id, outcome.result)
    : errorResponse(message.id, outcome.error);
  if (sse !== undefined) {
    sse.end(text);
    return;
  }
  const status = outcome.ok ? 200 : httpStatusFor(outcome.error.code, outcome.origin);
  const retryAfterMs = outcome.ok
    ? undefined
    : (outcome.error.data as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
  const extra: Record<string, string> =
    status === 429 && typeof retryAfterMs === 'number'
      ? { 'retry-after': String(Math.ceil(retryAfterMs / 1000)) }
      : {};
  sendJson(res, status, text, extra);
}
