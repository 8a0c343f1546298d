// Binds the HTTP handler to a node:http server with graceful shutdown.
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
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
  /** Open connections at most; more are closed as they arrive (default 1024). */
  maxConnections?: number;
  /** Time to receive a whole request, body included; a slower upload gets 408 (default 30 s). */
  requestTimeoutMs?: number;
  /**
   * How long an idle keep-alive connection stays open after a response (default 5 s, Node's). Behind a balancer or
   * proxy that keeps upstream connections, set it above their idle timeout (nginx and most balancers: 60 s), so that
   * the proxy closes first and never sends a request on a connection this server is closing.
   */
  keepAliveTimeoutMs?: number;
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
  // Requests in flight per socket: at shutdown, sockets with none (idle keep-alive ones, and connections that
  // never sent a request, which Node does not count as idle) are closed at once.
  const inFlight = new Map<Socket, number>();
  const requestTimeout = limits.requestTimeoutMs ?? 30_000;
  const server = createServer(
    {
      // Node (18+) counts its headers and request timeouts from a request's first byte, not from the end of the
      // previous response, so an idle keep-alive connection may outlast both; Node requires headersTimeout (its
      // default: the lesser of 60 s and requestTimeout) to stay at most requestTimeout.
      keepAliveTimeout: limits.keepAliveTimeoutMs ?? 5_000,
      requestTimeout,
      // How often Node looks for requests past their time: often enough that the bound holds within a second.
      connectionsCheckingInterval: Math.min(1_000, Math.max(100, requestTimeout)),
    },
    (req, res) => {
      const socket = req.socket;
      inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
      res.once('close', () => inFlight.set(socket, (inFlight.get(socket) ?? 1) - 1));
      (handler as HttpHandler)(req, res);
    },
  );
  server.maxConnections = limits.maxConnections ?? 1024;
  server.on('connection', (socket: Socket) => {
    inFlight.set(socket, 0);
    socket.once('close', () => inFlight.delete(socket));
  });
  const closeUnused = (): void => {
    for (const [socket, n] of inFlight) if (n === 0) socket.destroy();
  };
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
        const sweep = setInterval(closeUnused, 50);
        server.close(() => {
          clearTimeout(timer);
          clearInterval(sweep);
          resolve();
        });
        closeUnused();
      });
    },
  };
}
