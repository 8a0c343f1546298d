// Waiting for the client to go away on one POST (HttpExchange.onGone): every waiter is told once when the client
// leaves an unfinished response, none once it finished, and a waiter that stopped waiting is not told.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpExchange } from './exchange.js';
import { HttpReply } from './reply.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve));
});

/** A server whose every request becomes an exchange handed to `onExchange`; sends one POST and returns it. */
async function exchangeOnce(
  onExchange: (exchange: HttpExchange, res: ServerResponse) => void,
): Promise<{ client: ReturnType<typeof request>; response: Promise<IncomingMessage> }> {
  const server = createServer((req, res) => {
    const reply = new HttpReply(res, 0, undefined, '/mcp');
    const exchange = new HttpExchange(
      req,
      reply,
      { kind: 'request', id: 1, method: 'subscriptions/listen', params: undefined },
      { tenant: 't', principal: 'p' } as never,
      () => undefined,
    );
    req.resume();
    req.on('end', () => onExchange(exchange, res));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const client = request({ host: '127.0.0.1', port, method: 'POST', path: '/mcp' });
  const response = new Promise<IncomingMessage>((resolve) => client.on('response', resolve));
  client.on('error', () => undefined);
  client.end('{}');
  return { client, response };
}

describe('HttpExchange.onGone', () => {
  it('tells every waiter once when the client leaves an open stream, but not one that stopped waiting', async () => {
    const told: string[] = [];
    let closed!: () => void;
    const allClosed = new Promise<void>((resolve) => (closed = resolve));
    const { client, response } = await exchangeOnce((exchange, res) => {
      exchange.onGone(() => told.push('first'));
      exchange.onGone(() => told.push('second'));
      const stop = exchange.onGone(() => told.push('stopped'));
      stop();
      exchange.emit('notifications/message', { level: 'info' });
      res.on('close', () => setImmediate(closed));
    });
    await response;
    client.destroy();
    await allClosed;
    expect(told.sort()).toEqual(['first', 'second']);
  });

  it('tells no waiter of a response that finished, whether it waited before or after', async () => {
    const told: string[] = [];
    let finished!: () => void;
    const done = new Promise<void>((resolve) => (finished = resolve));
    const { client, response } = await exchangeOnce((exchange, res) => {
      exchange.onGone(() => told.push('finished'));
      exchange.reply.json(200, '{}');
      res.on('close', () =>
        setImmediate(() => {
          exchange.onGone(() => told.push('late'));
          finished();
        }),
      );
    });
    const answered = await response;
    answered.resume();
    await done;
    client.destroy();
    expect(told).toEqual([]);
  });
});
