// The change feed's LISTEN connection: one dedicated client (not from the pool) that reconnects with backoff.
import pg from 'pg';
import { LISTEN_APPLICATION_NAME } from './names.js';
import { backoffMs } from '../../pacing/backoff.js';

export interface ChangeListenerOptions {
  /** Connection settings; application_name is set to `durable-mcp-listen` so operators can find it. */
  config: pg.ClientConfig;
  channel: string;
  onPayload: (payload: string) => void;
  /** How often to check that the connection still answers (a half-open TCP connection never errors). */
  probeMs: number;
  /** Called each time LISTEN is in effect (first connection and every reconnection). */
  onListening?: () => void;
  /**
   * Called each time a connection that was listening is dropped (not on close): notifications go unheard until the
   * next one listens.
   */
  onLost?: () => void;
}

export interface ChangeListener {
  close(): Promise<void>;
}

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;

/** Asks `client` every `probeMs` whether it still answers; `drop`s it when it does not. */
function probeEvery(client: pg.Client, probeMs: number, drop: (client: pg.Client) => void): NodeJS.Timeout {
  const probe = setInterval(() => {
    client.query('SELECT 1').catch(() => drop(client));
  }, probeMs);
  probe.unref();
  return probe;
}

/**
 * LISTENs on `channel` until closed. When the connection drops (server restart, pg_terminate_backend, network),
 * it reconnects after 100 ms, doubling up to 5 s, with jitter so replicas do not stampede. Notifications sent while
 * disconnected are lost: `onListening` tells the feed each time LISTEN is in effect again, and its subscribers
 * read what they watch.
 */
export function startChangeListener({
  config,
  channel,
  onPayload,
  probeMs,
  onListening,
  onLost,
}: ChangeListenerOptions): ChangeListener {
  let closed = false;
  let current: pg.Client | undefined;
  let failures = 0;
  let retry: NodeJS.Timeout | undefined;
  let probe: NodeJS.Timeout | undefined;

  const scheduleReconnect = (): void => {
    if (closed || retry !== undefined) return;
    const wait = backoffMs(failures, FIRST_RETRY_MS, MAX_RETRY_MS);
    failures += 1;
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, wait);
    retry.unref();
  };

  let listening: pg.Client | undefined;
  const drop = (client: pg.Client): void => {
    if (current !== client) return; // already dropped ('error' and 'end' both fire)
    current = undefined;
    if (listening === client) onLost?.();
    listening = undefined;
    clearInterval(probe);
    client.removeAllListeners('notification');
    client.end().catch(() => undefined);
    scheduleReconnect();
  };

  const connect = async (): Promise<void> => {
    if (closed) return;
    const client = new pg.Client({
      ...config,
      application_name: LISTEN_APPLICATION_NAME,
      keepAlive: true,
      query_timeout: Math.max(1_000, probeMs),
    });
    current = client;
    client.on('error', () => drop(client));
    client.on('end', () => drop(client));
    client.on('notification', (msg) => {
      if (msg.channel === channel && msg.payload !== undefined) onPayload(msg.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch {
      drop(client);
      return;
    }
    if (current !== client) return;
    failures = 0;
    listening = client;
    probe = probeEvery(client, probeMs, drop);
    onListening?.();
  };

  void connect();
  return {
    async close() {
      if (closed) return;
      closed = true;
      clearTimeout(retry);
      clearInterval(probe);
      const client = current;
      current = undefined;
      if (client !== undefined) await client.end().catch(() => undefined);
    },
  };
}
