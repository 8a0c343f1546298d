// The connections a node:http server holds. Open connections are capped, but a connection with no request in flight
// (one that has sent nothing yet, or an idle keep-alive one) yields its place to a new one, the longest idle first:
// connections that only wait cannot keep anyone out. Optionally, what one client address holds is capped too: its
// connections, or, for a request from a trusted proxy, the requests in flight for the address it forwards.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { normalAddress, type TrustedProxies } from './client-address.js';

export interface ConnectionGuardOptions {
  maxConnections: number;
  /** What one client address may hold at once (0: no cap). */
  maxPerSource: number;
  /** Proxies whose X-Forwarded-For names the client (their own connections are not counted by address). */
  proxies: TrustedProxies | undefined;
}

/** What a request was let in with. */
export type Admission = { ok: true; release: () => void } | { ok: false; limit: number };

export interface ConnectionGuard {
  /** A new connection: kept (the longest idle one closed if the cap is reached), or closed at once. */
  connected(socket: Socket): void;
  /** A request on a kept connection: in flight until `release`, or refused (its forwarded client is over its cap). */
  request(req: IncomingMessage): Admission;
  /** Closes every connection without a request in flight (at shutdown). */
  closeIdle(): void;
}

interface Held {
  /** The address this connection counts against, when it does. */
  source: string | undefined;
  /** The peer's address, when it is a trusted proxy. */
  proxy: string | undefined;
  inFlight: number;
}

export function createConnectionGuard(options: ConnectionGuardOptions): ConnectionGuard {
  const { maxConnections, maxPerSource, proxies } = options;
  const open = new Map<Socket, Held>();
  /** Connections without a request in flight, the longest idle first (a Set keeps insertion order). */
  const idle = new Set<Socket>();
  /** Connections, and requests through trusted proxies, held per client address (only with a per-source cap). */
  const bySource = new Map<string, number>();
  const count = (source: string, delta: 1 | -1): void => {
    const n = (bySource.get(source) ?? 0) + delta;
    if (n <= 0) bySource.delete(source);
    else bySource.set(source, n);
  };
  const full = (source: string): boolean => maxPerSource > 0 && (bySource.get(source) ?? 0) >= maxPerSource;

  const forget = (socket: Socket): void => {
    const held = open.get(socket);
    if (held === undefined) return;
    open.delete(socket);
    idle.delete(socket);
    if (held.source !== undefined) count(held.source, -1);
  };
  const close = (socket: Socket): void => {
    forget(socket);
    socket.destroy();
  };

  return {
    connected(socket) {
      const address = socket.remoteAddress === undefined ? undefined : normalAddress(socket.remoteAddress);
      if (address === undefined) return close(socket);
      const proxy = proxies?.trusts(address) === true ? address : undefined;
      const source = maxPerSource > 0 && proxy === undefined ? address : undefined;
      if (source !== undefined && full(source)) return close(socket);
      if (source !== undefined) count(source, 1);
      open.set(socket, { source, proxy, inFlight: 0 });
      idle.add(socket);
      socket.once('close', () => forget(socket));
      if (open.size <= maxConnections) return;
      // At the cap: the connection idle longest makes room, or, when every other one is busy, the new one goes.
      const longestIdle = idle.values().next().value;
      close(longestIdle !== undefined && longestIdle !== socket ? longestIdle : socket);
    },
    request(req) {
      const held = open.get(req.socket);
      if (held === undefined) return { ok: true, release: () => undefined };
      const client =
        held.proxy === undefined || maxPerSource === 0
          ? undefined
          : (proxies as TrustedProxies).clientOf(held.proxy, header(req, 'x-forwarded-for'));
      if (client !== undefined && full(client)) return { ok: false, limit: maxPerSource };
      if (client !== undefined) count(client, 1);
      held.inFlight += 1;
      idle.delete(req.socket);
      let released = false;
      return {
        ok: true,
        release: () => {
          if (released) return;
          released = true;
          if (client !== undefined) count(client, -1);
          held.inFlight -= 1;
          // Idle from now on: behind every connection that was idle before it.
          if (held.inFlight === 0 && open.has(req.socket)) idle.add(req.socket);
        },
      };
    },
    closeIdle() {
      for (const socket of [...idle]) close(socket);
    },
  };
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
};
