// The connections a node:http server holds. Open connections are capped, but a connection with no request in flight
// (one that has sent nothing yet, or an idle keep-alive one) yields its place to a new one: the new connection's own
// address gives up its connection idle longest if it has one, else the address holding the most connections does. So
// an address that opens connections faster than it sends requests only ever closes its own, and connections that
// only wait cannot keep anyone out. Optionally, what one client address holds is capped too: its connections, or, for
// a request from a trusted proxy, the requests in flight for the address it forwards.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { normalAddress, type TrustedProxies } from './client-address.js';

export interface ConnectionGuardOptions {
  maxConnections: number;
  /** What one client address may hold at once (0: no cap). */
  maxPerSource: number;
  /** Proxies whose X-Forwarded-For names the client (their own connections are not capped by address). */
  proxies: TrustedProxies | undefined;
}

export interface ConnectionGuard {
  /** A new connection: kept (an idle one closed if the cap is reached), or closed at once. */
  connected(socket: Socket): void;
  /**
   * A request: in flight until its response closes (undefined), or refused because the client a trusted proxy
   * forwards it for holds its share already (the cap, then).
   */
  admit(req: IncomingMessage, res: ServerResponse): number | undefined;
  /** Closes every connection without a request in flight (at shutdown). */
  closeIdle(): void;
}

/** The connections of one peer address. */
interface Peer {
  open: number;
  /** Those without a request in flight, the longest idle first (a Set keeps insertion order). */
  idle: Set<Socket>;
}

interface Held {
  peer: Peer;
  address: string;
  /** Whether the peer is a trusted proxy. */
  proxy: boolean;
  inFlight: number;
}

/** The first of a set that is not `except`. */
function firstOf(set: Set<Socket>, except: Socket): Socket | undefined {
  for (const s of set) if (s !== except) return s;
  return undefined;
}

/** At the cap: an idle connection of the newcomer's own address, else of the address that holds the most. */
function yielding(peers: Iterable<Peer>, socket: Socket, own: Peer): Socket | undefined {
  const mine = firstOf(own.idle, socket);
  if (mine !== undefined) return mine;
  let most: Peer | undefined;
  for (const peer of peers)
    if (peer.open > (most?.open ?? 0) && firstOf(peer.idle, socket) !== undefined) most = peer;
  return most === undefined ? undefined : firstOf(most.idle, socket);
}

export function createConnectionGuard(options: ConnectionGuardOptions): ConnectionGuard {
  const { maxConnections, maxPerSource, proxies } = options;
  const open = new Map<Socket, Held>();
  const peers = new Map<string, Peer>();
  /** Requests in flight per client that a trusted proxy forwards (only with a per-source cap). */
  const forwarded = new Map<string, number>();
  const count = (client: string, delta: 1 | -1): void => {
    const n = (forwarded.get(client) ?? 0) + delta;
    if (n <= 0) forwarded.delete(client);
    else forwarded.set(client, n);
  };

  const forget = (socket: Socket): void => {
    const held = open.get(socket);
    if (held === undefined) return;
    open.delete(socket);
    held.peer.open -= 1;
    held.peer.idle.delete(socket);
    if (held.peer.open === 0) peers.delete(held.address);
  };
  const close = (socket: Socket): void => {
    forget(socket);
    socket.destroy();
  };
  // Listeners shared by every connection and response (`this` is the emitter): none of their own per connection.
  function socketClosed(this: Socket): void {
    forget(this);
  }
  const release = (socket: Socket, client: string | undefined): void => {
    const held = open.get(socket);
    if (client !== undefined) count(client, -1);
    if (held === undefined) return;
    held.inFlight -= 1;
    // Idle from now on: behind every connection of its address that was idle before it.
    if (held.inFlight === 0) held.peer.idle.add(socket);
  };
  function responseClosed(this: ServerResponse): void {
    release(this.req.socket, undefined);
  }
  return {
    connected(socket) {
      if (socket.remoteAddress === undefined) return void socket.destroy();
      const address = normalAddress(socket.remoteAddress);
      const proxy = proxies?.trusts(address) === true;
      const peer = peers.get(address) ?? { open: 0, idle: new Set<Socket>() };
      if (maxPerSource > 0 && !proxy && peer.open >= maxPerSource) return void socket.destroy();
      peers.set(address, peer);
      peer.open += 1;
      peer.idle.add(socket);
      open.set(socket, { peer, address, proxy, inFlight: 0 });
      socket.on('close', socketClosed);
      if (open.size <= maxConnections) return;
      // When every other connection is busy, the new one goes.
      close(yielding(peers.values(), socket, peer) ?? socket);
    },
    admit(req, res) {
      const socket = req.socket;
      const held = open.get(socket);
      if (held === undefined) return undefined;
      const client =
        held.proxy && maxPerSource > 0
          ? (proxies as TrustedProxies).clientOf(held.address, header(req, 'x-forwarded-for'))
          : undefined;
      if (client !== undefined && (forwarded.get(client) ?? 0) >= maxPerSource) return maxPerSource;
      held.inFlight += 1;
      held.peer.idle.delete(socket);
      // A response closes once: its close releases the request.
      if (client === undefined) res.on('close', responseClosed);
      else {
        count(client, 1);
        res.on('close', () => release(socket, client));
      }
      return undefined;
    },
    closeIdle() {
      for (const peer of [...peers.values()]) for (const socket of [...peer.idle]) close(socket);
    },
  };
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
};
