// Binds the HTTP handler to a node:http server with graceful shutdown.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpHandler } from './handler.js';

export interface RunningHttpServer {
  readonly server: Server;
  readonly url: string;
  readonly port: number;
  /** Stops accepting, lets in-flight requests finish (up to graceMs), then closes every socket. */
  close(graceMs?: number): Promise<void>;
}

export async function listenHttp(
  handler: HttpHandler,
  host: string,
  port: number,
  path = '/mcp',
): Promise<RunningHttpServer> {
  const server = createServer({ keepAliveTimeout: 5_000, requestTimeout: 60_000 }, handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    server,
    port: address.port,
    url: `http://${shownHost}:${address.port}${path}`,
    close(graceMs = 10_000) {
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        timer.unref();
        // Keep-alive sockets turn idle as their in-flight responses finish; close them as soon as they do.
        const sweep = setInterval(() => server.closeIdleConnections(), 50);
        server.close(() => {
          clearTimeout(timer);
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}
