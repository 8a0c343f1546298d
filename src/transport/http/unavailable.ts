// The endpoint of a process that listens before it can serve (its store does not answer yet): `/healthz` 200, a Host
// or Origin the endpoint would refuse 403 (as it will once serving), `/readyz` 503 with the reason, and every other
// request 503 with a JSON-RPC error and Retry-After, its body unread and nothing dispatched.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode } from '../../wire/codes.js';
import { errorResponse } from '../../wire/jsonrpc.js';
import { ProtocolError } from '../../wire/protocol-error.js';
import type { HttpHandler } from './handler.js';
import { checkOrigin, type OriginPolicy } from './origin-check.js';

export interface UnavailableOptions {
  /** Why `/readyz` answers 503, e.g. "store unreachable". */
  reason: string;
  /** The message of the JSON-RPC error every other request gets. */
  message: string;
  /** Seconds a client should wait before trying again (default 1). */
  retryAfterSeconds?: number;
  /** The Host and Origin names the endpoint accepts (default: any). */
  origin?: OriginPolicy;
}

/** Bodies up to this size are left for Node to discard, keeping the connection; larger or unknown ones close it. */
const DISCARDED_BODY_BYTES = 64 * 1024;

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

/** Whether the request may carry a body too large (or of unknown size) to discard for keeping the connection. */
function bulkyBody(req: IncomingMessage): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = Number(req.headers['content-length'] ?? 0);
  return !(length <= DISCARDED_BODY_BYTES);
}

/** `Connection: close` when the body is too large (or of unknown size) to discard for keeping the connection. */
const closing = (req: IncomingMessage): Record<string, string> =>
  bulkyBody(req) ? { connection: 'close' } : {};

export function createUnavailableHandler(options: UnavailableOptions): HttpHandler {
  const retryAfter = { 'retry-after': String(options.retryAfterSeconds ?? 1) };
  const notReady = JSON.stringify({ status: 'not ready', reason: options.reason });
  // -32603: the spec's code for a server that cannot serve the request (the one a store outage gets later, too).
  const refusal = errorResponse(null, new ProtocolError(ErrorCode.InternalError, options.message), true);
  return (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    const probe = req.method === 'GET' || req.method === 'HEAD';
    const { origin } = options;
    const forbidden =
      origin === undefined ? undefined : checkOrigin(origin, req.headers.host, req.headers.origin);
    if (probe && pathname === '/healthz') send(res, 200, '{"status":"ok"}');
    else if (forbidden !== undefined)
      send(
        res,
        403,
        errorResponse(null, new ProtocolError(ErrorCode.InvalidRequest, forbidden)),
        closing(req),
      );
    else if (probe && pathname === '/readyz') send(res, 503, notReady, retryAfter);
    else send(res, 503, refusal, { ...retryAfter, ...closing(req) });
  };
}
