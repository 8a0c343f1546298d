// The client library behind a balancer, against a scripted HTTP server on 127.0.0.1: requests safe to repeat are sent
// again after 502/503 and reset connections, other calls never; a long poll leaves no abort listener behind.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, ProtocolError } from '../../src/client-entry.js';

interface Seen {
  id: unknown;
  method: string;
  params: Record<string, unknown> & { _meta: Record<string, unknown> };
}
type Script = (msg: Seen, res: ServerResponse, req: IncomingMessage) => void;

const KEY = 'dev.durable-mcp/idempotencyKey';
let server: Server | undefined;
let seen: Seen[] = [];

/** A server that answers each JSON-RPC request by `script`, recording every request it read. */
async function serve(script: Script): Promise<string> {
  seen = [];
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const msg = JSON.parse(body) as Seen;
      seen.push(msg);
      script(msg, res, req);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

const answer = (res: ServerResponse, id: unknown, result: Record<string, unknown>): void =>
  void res
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', id, result: { resultType: 'complete', ...result } }));
const notReady = (res: ServerResponse): void =>
  void res
    .writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' })
    .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'not ready' } }));
const count = (method: string): number => seen.filter((m) => m.method === method).length;

/** Refuses the first `refusals` requests of each method with 503, then answers with `result`. */
const refusing =
  (refusals: number, result: (msg: Seen) => Record<string, unknown>): Script =>
  (msg, res) =>
    count(msg.method) <= refusals ? notReady(res) : answer(res, msg.id, result(msg));

const task = { taskId: 'task-1', status: 'working', createdAt: '2026-01-01T00:00:00Z', ttlMs: 60_000 };

describe('the client behind a balancer', () => {
  it('sends tasks/get again after two 503s, and the caller gets the answer', async () => {
    const url = await serve(refusing(2, () => task));
    const client = createClient({ url });
    expect(await client.task('task-1').get()).toMatchObject({ taskId: 'task-1', status: 'working' });
    expect(count('tasks/get')).toBe(3);
  });

  it('never sends a tools/call without an idempotency key twice: the caller sees the 503', async () => {
    const url = await serve(refusing(2, () => ({ content: [] })));
    const client = createClient({ url, tasks: false });
    const error = await client.callTool('echo', { text: 'once' }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toMatchObject({ httpStatus: 503, message: 'not ready' });
    expect(count('tools/call')).toBe(1);
    expect(seen[0]?.params._meta[KEY]).toBeUndefined();
  });

  it('sends a tools/call with an idempotency key again, with the same key', async () => {
    const url = await serve(refusing(2, () => ({ ...task, resultType: 'task' })));
    const client = createClient({ url });
    const call = await client.callTool('slow', {});
    expect(call.kind).toBe('task');
    expect(count('tools/call')).toBe(3);
    const keys = new Set(seen.map((m) => m.params._meta[KEY]));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toEqual(expect.any(String));
  });

  it('sends a request again when the connection is reset before any response, but not a call without a key', async () => {
    const url = await serve((msg, res, req) =>
      count(msg.method) === 1
        ? req.socket.destroy()
        : answer(res, msg.id, msg.method === 'tasks/get' ? task : {}),
    );
    const client = createClient({ url, tasks: false });
    expect(await client.task('task-1').get()).toMatchObject({ status: 'working' });
    expect(count('tasks/get')).toBe(2);
    await expect(client.callTool('echo', {})).rejects.toThrow();
    expect(count('tools/call')).toBe(1);
  });

  it('cuts a long Retry-After to maxDelayMs, and `retry: false` sends once', async () => {
    const url = await serve((msg, res) =>
      count(msg.method) <= 1
        ? void res
            .writeHead(502, { 'content-type': 'text/html', 'retry-after': '60' })
            .end('<h1>Bad Gateway</h1>')
        : answer(res, msg.id, task),
    );
    const started = Date.now();
    const patient = createClient({ url, retry: { maxDelayMs: 100 } });
    expect(await patient.task('task-1').get()).toMatchObject({ status: 'working' });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(count('tasks/get')).toBe(2);
    seen = [];
    const once = createClient({ url, retry: false });
    await expect(once.request('tools/list')).rejects.toThrow(/HTTP 502/);
    expect(count('tools/list')).toBe(1);
  });

  it('follows a task through 35 polls with one caller signal and no MaxListenersExceededWarning', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      const url = await serve((msg, res) => {
        if (msg.method === 'subscriptions/listen')
          return void res
            .writeHead(404, { 'content-type': 'application/json' })
            .end(
              JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'no listen' } }),
            );
        const n = count('tasks/get');
        answer(res, msg.id, {
          ...task,
          ...(n < 35
            ? { statusMessage: `poll ${n}`, pollIntervalMs: 5 }
            : { status: 'completed', result: { content: [] } }),
        });
      });
      const client = createClient({ url });
      const caller = new AbortController();
      const outcome = await client.task('task-1').result({ signal: caller.signal });
      expect(outcome.status).toBe('completed');
      expect(count('tasks/get')).toBe(35);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
