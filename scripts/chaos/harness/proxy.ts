// A loopback TCP proxy in front of PostgreSQL: lets the suite cut, refuse or black-hole the server's connections
// without touching anybody else's, and tells which backend connections belong to the server under test.
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Scope } from './scope.js';

/** refuse: nothing listens; reset: connections are cut at once; blackhole: bytes stop flowing. */
export type ProxyFault = 'refuse' | 'reset' | 'blackhole';

export interface Proxy {
  port: number;
  readonly mode: 'up' | ProxyFault;
  /** Local ports of the proxy's upstream connections: client_port of the server's backends. */
  upstreamPorts(): number[];
  down(kind: ProxyFault): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
  port: number | undefined;
  paused: boolean;
}

const wire = (pair: Pair): void => {
  pair.paused = false;
  pair.client.pipe(pair.upstream);
  pair.upstream.pipe(pair.client);
};

const pause = (pair: Pair): void => {
  pair.paused = true;
  pair.client.unpipe(pair.upstream);
  pair.upstream.unpipe(pair.client);
  pair.client.pause();
  pair.upstream.pause();
};

const cut = (pairs: Set<Pair>): void => {
  for (const pair of [...pairs]) {
    pair.client.destroy();
    pair.upstream.destroy();
  }
};

const closeServer = (server: Server): Promise<void> => new Promise((r) => server.close(() => r()));

export async function startProxy(scope: Scope, targetUrl: string): Promise<Proxy> {
  const target = new URL(targetUrl);
  const targetPort = Number(target.port || 5432);
  const pairs = new Set<Pair>();
  let mode: Proxy['mode'] = 'up';
  const onClient = (client: Socket): void => {
    client.on('error', () => undefined);
    if (mode === 'reset') {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, target.hostname);
    const pair: Pair = { client, upstream, port: undefined, paused: false };
    pairs.add(pair);
    upstream.on('error', () => undefined);
    upstream.on('connect', () => {
      pair.port = upstream.localPort;
    });
    const end = (): void => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    if (mode === 'blackhole') pause(pair);
    else wire(pair);
  };
  let server = createServer(onClient);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const proxy: Proxy = {
    port,
    get mode() {
      return mode;
    },
    upstreamPorts: () => [...pairs].map((p) => p.port).filter((p): p is number => p !== undefined),
    async down(kind) {
      mode = kind;
      if (kind === 'blackhole') {
        for (const pair of pairs) pause(pair);
        return;
      }
      cut(pairs);
      pairs.clear();
      if (kind === 'refuse') await closeServer(server);
    },
    async up() {
      const was = mode;
      mode = 'up';
      if (was === 'refuse') {
        server = createServer(onClient);
        await new Promise<void>((r, j) => {
          server.once('error', j);
          server.listen(port, '127.0.0.1', r);
        });
      }
      if (was === 'blackhole') for (const pair of pairs) if (pair.paused) wire(pair);
    },
    async close() {
      cut(pairs);
      await closeServer(server);
    },
  };
  scope.defer(() => proxy.close().catch(() => undefined));
  return proxy;
}
