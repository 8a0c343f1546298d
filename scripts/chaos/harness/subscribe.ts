// A `subscriptions/listen` stream for task ids, read incrementally as server-sent events.
import { request as httpRequest, type Agent, type ClientRequest, type IncomingMessage } from 'node:http';
import { PROTOCOL_VERSION } from '../../../test/support/protocol.js';
import { envelope, nextRequestId, type Json } from './rpc.js';

export interface SubscribeOptions {
  agent?: Agent;
  onMessage?: (msg: Json) => void;
  timeoutMs?: number;
  id?: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
}

export interface Subscription {
  /** Resolves with the acknowledgement (or rejects). */
  ack: Promise<Json>;
  /** Aborts the request. */
  close(): void;
}

/** The JSON-RPC messages of the complete events in `buffer`, and what is left of it. */
function takeEvents(buffer: string): { messages: Json[]; rest: string } {
  let rest = buffer.replace(/\r\n?/g, '\n');
  const messages: Json[] = [];
  let cut: number;
  while ((cut = rest.indexOf('\n\n')) !== -1) {
    const block = rest.slice(0, cut);
    rest = rest.slice(cut + 2);
    const data = block
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''));
    if (data.length === 0) continue;
    try {
      messages.push(JSON.parse(data.join('\n')) as Json);
    } catch {
      continue;
    }
  }
  return { messages, rest };
}

/**
 * A `subscriptions/listen` stream for task ids. `onMessage` gets every JSON-RPC message; `ack` resolves with the
 * acknowledgement (or rejects); `close()` aborts the request.
 */
export function subscribe(
  url: string,
  taskIds: readonly string[],
  options: SubscribeOptions = {},
): Subscription {
  const { agent, onMessage, timeoutMs = 30_000, id = `sub-${nextRequestId()}`, token } = options;
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'subscriptions/listen',
    params: { notifications: { taskIds }, _meta: envelope() },
  });
  let req: ClientRequest | undefined;
  let closed = false;
  const ack = new Promise<Json>((resolveAck, rejectAck) => {
    const timer = setTimeout(() => {
      rejectAck(new Error('no acknowledgement'));
      req?.destroy();
    }, timeoutMs);
    const onStream = (res: IncomingMessage): void => {
      if (!String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
        clearTimeout(timer);
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => rejectAck(new Error(`not a stream: ${res.statusCode} ${Buffer.concat(chunks)}`)));
        return;
      }
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const { messages, rest } = takeEvents(buffer + chunk);
        buffer = rest;
        for (const msg of messages) {
          if (msg.method === 'notifications/subscriptions/acknowledged') {
            clearTimeout(timer);
            resolveAck(msg);
          }
          onMessage?.(msg);
        }
      });
      res.on('error', () => undefined);
      res.on('end', () => {
        clearTimeout(timer);
        if (!closed) rejectAck(new Error('stream ended'));
      });
    };
    req = httpRequest(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(body),
          'mcp-protocol-version': PROTOCOL_VERSION,
          'mcp-method': 'subscriptions/listen',
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        },
      },
      onStream,
    );
    req.on('error', (err) => {
      clearTimeout(timer);
      rejectAck(err);
    });
    req.end(body);
  });
  ack.catch(() => undefined);
  return {
    ack,
    close() {
      closed = true;
      req?.destroy();
    },
  };
}
