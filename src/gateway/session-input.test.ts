import { describe, expect, it } from 'vitest';
import { createSessionCalls, originNotingFetch } from './session-input.js';

const KEY = 'dev.durable-mcp/idempotencyKey';

/** A POST of a JSON-RPC tools/call, tagged with `key` when given. */
const post = (id: number, key?: string): RequestInit => ({
  method: 'POST',
  body: JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 't', arguments: {}, ...(key === undefined ? {} : { _meta: { [KEY]: key } }) },
  }),
});

/** A fetch answering with these SSE events, split into chunks of `size` characters. */
const sseFetch =
  (events: unknown[], size = 7): typeof fetch =>
  async () => {
    const text = events.map((e) => `id: x\ndata: ${JSON.stringify(e)}\n\n`).join('');
    const chunks = text.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g')) ?? [];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of chunks) controller.enqueue(new TextEncoder().encode(c));
        controller.close();
      },
    });
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  };

describe('the calls out on a 2025-11-25 session', () => {
  it("routes a request that came on a call's stream to that call, whatever else is out", async () => {
    const calls = createSessionCalls();
    calls.add('durable-mcp:task_a', undefined);
    const b = calls.add('durable-mcp:task_b', undefined);
    const elicit = { jsonrpc: '2.0', id: 0, method: 'elicitation/create', params: { message: 'ok?' } };
    const progress = { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1 } };
    const res = await originNotingFetch(sseFetch([progress, elicit]), calls)(
      'http://x/mcp',
      post(2, 'durable-mcp:task_b'),
    );
    // The body passes through unchanged.
    expect(await res.text()).toContain('"elicitation/create"');
    expect(calls.route(0)).toMatchObject({ tag: 'durable-mcp:task_b' });
    // Once its call is over, a request that came with it has nowhere to go.
    calls.noteOrigin(5, 'durable-mcp:task_b');
    b.end();
    expect(calls.route(5)).toMatch(/no longer out/);
  });

  it('refuses a request that came with a call that is not a task', async () => {
    const calls = createSessionCalls();
    calls.add(null, undefined);
    const elicit = { jsonrpc: '2.0', id: 3, method: 'roots/list' };
    await (await originNotingFetch(sseFetch([elicit]), calls)('http://x/mcp', post(1))).text();
    expect(calls.route(3)).toMatch(/not a gateway task/);
  });

  it('routes a request nothing attributes to the one call out, and refuses it with several or none out', () => {
    const calls = createSessionCalls();
    expect(calls.route(1)).toMatch(/no call is out/);
    const one = calls.add('durable-mcp:task_a', undefined);
    expect(calls.route(1)).toMatchObject({ tag: 'durable-mcp:task_a' });
    calls.add('durable-mcp:task_b', undefined);
    expect(calls.route(1)).toMatch(/^2 calls are out on this session/);
    one.end();
    expect(calls.route(1)).toMatchObject({ tag: 'durable-mcp:task_b' });
  });

  it("tells whoever answers a request of the upstream's cancel of it, request id 0 included", () => {
    const calls = createSessionCalls();
    const heard: number[] = [];
    const stop = calls.watch(0, () => heard.push(0));
    calls.watch(4, () => heard.push(4));
    calls.cancelled(0);
    stop();
    calls.cancelled(0);
    calls.cancelled(7);
    expect(heard).toEqual([0]);
  });
});
