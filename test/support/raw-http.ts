// Connections as an attacker (or a proxy) makes them, from a chosen local address (Linux routes all of 127/8 to the
// loopback interface): raw sockets that send nothing or hold a request, and one-shot requests that report what came
// back, refusals and resets included. Shared by the e2e tests and the reliability suite.
import { request, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';

export interface RawConnection {
  socket: Socket;
  /** Everything received so far. */
  text(): string;
  /** Resolves when the server (or the test) closed it. */
  closed: Promise<void>;
  /** Resolves true once it closed, false if still open after `ms`. */
  closedWithin(ms: number): Promise<boolean>;
}

/** A TCP connection to 127.0.0.1:`port` from `from`, sending nothing until told. */
export function rawConnection(port: number, from = '127.0.0.1'): RawConnection {
  const socket = connect({ port, host: '127.0.0.1', localAddress: from });
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return {
    socket,
    text: () => text,
    closed,
    closedWithin: (ms) => {
      let timer: NodeJS.Timeout | undefined;
      return Promise.race([
        closed.then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
      ]).finally(() => clearTimeout(timer));
    },
  };
}

/** Waits (at most `ms`) until `text()` holds `needle`; true when it does. */
export async function received(c: RawConnection, needle: string, ms = 5_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!c.text().includes(needle)) {
    if (Date.now() > end || c.socket.destroyed) return c.text().includes(needle);
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}

export interface Answer {
  /** The HTTP status, or undefined when the connection failed. */
  status: number | undefined;
  headers: IncomingHttpHeaders;
  body: string;
  /** The error code of a refused, reset or timed-out connection. */
  error?: string;
  ms: number;
}

export interface OneShot {
  path?: string;
  method?: string;
  /** The local address to send from (default 127.0.0.1). */
  from?: string;
  headers?: OutgoingHttpHeaders;
  body?: string;
  timeoutMs?: number;
}

/** One request on a connection of its own; never throws. */
export function oneShot(port: number, options: OneShot = {}): Promise<Answer> {
  const { path = '/healthz', method = 'GET', from, headers = {}, body, timeoutMs = 10_000 } = options;
  const started = Date.now();
  return new Promise((resolve) => {
    const done = (answer: Omit<Answer, 'ms'>): void => resolve({ ...answer, ms: Date.now() - started });
    const req = request(
      { host: '127.0.0.1', port, path, method, localAddress: from, agent: false, headers },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => done({ status: res.statusCode, headers: res.headers, body: text }));
        res.on('error', (err) =>
          done({ status: res.statusCode, headers: res.headers, body: text, error: code(err) }),
        );
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', (err) => done({ status: undefined, headers: {}, body: '', error: code(err) }));
    req.end(body);
  });
}

const code = (err: Error & { code?: string }): string => err.code ?? err.message;

/** A request whose response has begun and stays open (an event stream): in flight until `close`. */
export interface HeldRequest {
  status: number | undefined;
  error?: string;
  close(): void;
}

/**
 * Sends a request and resolves once its response headers arrive (or it fails), leaving the response open; `onData` is
 * given what the response sends (its body is dropped otherwise).
 */
export function holdRequest(
  port: number,
  options: OneShot & { onData?: (text: string) => void } = {},
): Promise<HeldRequest> {
  const { path = '/mcp', method = 'POST', from, headers = {}, body, timeoutMs = 10_000, onData } = options;
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path, method, localAddress: from, agent: false, headers },
      (res) => {
        req.setTimeout(0);
        if (onData !== undefined) res.on('data', (c: Buffer) => onData(c.toString()));
        res.resume();
        res.on('error', () => undefined);
        resolve({ status: res.statusCode, close: () => req.destroy() });
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', (err) => resolve({ status: undefined, error: code(err), close: () => undefined }));
    req.end(body);
  });
}
