// Binds the HTTP handler to a node:http server: its timeouts, the connections it holds (connection-guard.ts) and a
// graceful shutdown.
import { createServer, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ErrorCode } from '../../wire/codes.js';
import { errorResponse } from '../../wire/jsonrpc.js';
import { ProtocolError } from '../../wire/protocol-error.js';
import { parseTrustedProxies } from './client-address.js';
import { createConnectionGuard, type ConnectionGuard } from './connection-guard.js';
import type { HttpHandler } from './handler.js';

export interface RunningHttpServer {
  readonly server: Server;
  readonly url: string;
  readonly port: number;
  /** Stops accepting, lets in-flight requests finish (up to graceMs), then closes every socket. */
  close(graceMs?: number): Promise<void>;
}

/** Where the server was bound: for settings that name the server's own URL (e.g. the OAuth resource). */
export interface BoundAddress {
  readonly port: number;
  readonly url: string;
}

/** Limits of the node:http server itself. */
export interface ListenHttpOptions {
  /**
   * Open connections at most (default 1024). At the cap, a connection without a request in flight (one that has sent
   * nothing yet, or an idle keep-alive one) is closed to make room for a new one: the new connection's own address
   * gives up its connection idle longest, or, when it has none, the address holding the most connections does. A new
   * connection is closed at once only when every other one has a request in flight.
   */
  maxConnections?: number;
  /** Time to receive a whole request, body included; a slower upload gets 408 (default 30 s). */
  requestTimeoutMs?: number;
  /**
   * Time to receive a request's head (its line and headers) from the moment the connection opens or, on a kept-alive
   * connection, from the request's first byte; then 408 and the connection closes (default 5 s; at most
   * `requestTimeoutMs`). A connection that never sends a byte is closed after it.
   */
  headersTimeoutMs?: number;
  /**
   * How long an idle keep-alive connection stays open after a response (default 5 s, Node's). Behind a balancer or
   * proxy that keeps upstream connections, set it above their idle timeout (nginx and most balancers: 60 s), so that
   * the proxy closes first and never sends a request on a connection this server is closing.
   */
  keepAliveTimeoutMs?: number;
  /**
   * What one client address may hold at once (default 0: no cap): its open connections (more are closed as they
   * arrive), and, for a request from a `trustProxy` address, the requests in flight for the client it forwards (more
   * get 429). Behind a balancer without `trustProxy`, every connection comes from the balancer: leave it off.
   */
  maxConnectionsPerSource?: number;
  /**
   * Proxies (addresses, or CIDR ranges such as `10.0.0.0/8`) whose `X-Forwarded-For` names the client for
   * `maxConnectionsPerSource`: the right-most address in it that is not one of them.
   */
  trustProxy?: readonly string[];
}

/** Node's own timeouts, from the limits. */
function serverOptions(limits: ListenHttpOptions): ServerOptions {
  const requestTimeout = limits.requestTimeoutMs ?? 30_000;
  // Node requires headersTimeout to stay at most requestTimeout (when that is on).
  const wanted = limits.headersTimeoutMs ?? 5_000;
  const headersTimeout = requestTimeout > 0 ? Math.min(wanted, requestTimeout) : wanted;
  const shortest = Math.min(requestTimeout || Infinity, headersTimeout || Infinity);
  return {
    // Node (18+) counts the headers and request timeouts from the connection's start, then from each request's first
    // byte, not from the end of the previous response: an idle keep-alive connection is bounded by keepAliveTimeout.
    keepAliveTimeout: limits.keepAliveTimeoutMs ?? 5_000,
    requestTimeout,
    headersTimeout,
    // How often Node looks for requests past their time: often enough that each bound holds within a second.
    connectionsCheckingInterval: Math.min(1_000, Math.max(100, shortest)),
  };
}

function connectionGuardFor(limits: ListenHttpOptions): ConnectionGuard {
  const trusted = parseTrustedProxies(limits.trustProxy ?? []);
  if (!trusted.ok) throw new TypeError(`trustProxy: ${trusted.reason}`);
  return createConnectionGuard({
    maxConnections: limits.maxConnections ?? 1024,
    maxPerSource: limits.maxConnectionsPerSource ?? 0,
    proxies: (limits.trustProxy ?? []).length === 0 ? undefined : trusted.value,
  });
}

/** A request from a client address that already holds its share: 429 with the limit. */
function tooManyFromSource(res: ServerResponse, limit: number): void {
  const error = new ProtocolError(
    ErrorCode.TooManyRequests,
    `Too many requests at once from one client address (limit ${limit})`,
    { limit },
  );
  const body = errorResponse(null, error, true);
  res.writeHead(429, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'retry-after': '1',
  });
  res.end(body);
}

/** Builds the handler once the port is known. */
export interface HandlerFactory {
  build(bound: BoundAddress): HttpHandler;
}

/**
 * Serves `handler`, or the handler that `factory.build(bound)` makes once the port is known, so that a handler whose
 * settings name the server's own URL (with port 0) is still built once, complete, before the first request.
 */
export async function listenHttp(
  handlerOrFactory: HttpHandler | HandlerFactory,
  host: string,
  port: number,
  path = '/mcp',
  limits: ListenHttpOptions = {},
): Promise<RunningHttpServer> {
  let handler = typeof handlerOrFactory === 'function' ? handlerOrFactory : undefined;
  const guard = connectionGuardFor(limits);
  const server = createServer(serverOptions(limits), (req, res) => {
    const refused = guard.admit(req, res);
    if (refused !== undefined) {
      tooManyFromSource(res, refused);
      return;
    }
    (handler as HttpHandler)(req, res);
  });
  server.on('connection', (socket: Socket) => guard.connected(socket));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${shownHost}:${address.port}${path}`;
  if (handler === undefined) {
    // Built before this function returns: requests are handled only in later turns of the event loop.
    try {
      handler = (handlerOrFactory as HandlerFactory).build({ port: address.port, url });
    } catch (err) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      throw err;
    }
  }
  return {
    server,
    port: address.port,
    url,
    close(graceMs = 10_000) {
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        timer.unref();
        // Keep-alive sockets turn idle as their in-flight responses finish; close them as soon as they do.
        const sweep = setInterval(() => guard.closeIdle(), 50);
        server.close(() => {
          clearTimeout(timer);
          clearInterval(sweep);
          resolve();
        });
        guard.closeIdle();
      });
    },
  };
}
