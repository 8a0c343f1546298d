// subscriptions/listen as the modern wire has it: one POST answered with an event stream. There is no GET stream,
// no session and no resumption: SSE events carry no ids, Last-Event-ID and Mcp-Session-Id are ignored, and a client
// that comes back simply listens again and gets the task's current snapshot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool, textResult } from '../../src/index.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';
import { parseSse } from '../support/http.js';
import { validateMessage } from '../support/schema.js';
import { lastMessage, rpc } from '../support/server.js';

const EXT = 'io.modelcontextprotocol/tasks';
const CAPS = { elicitation: {}, extensions: { [EXT]: {} } };
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': CAPS,
};

const pause = defineTool({
  name: 'pause',
  description: 'Finishes after a short pause',
  task: { support: 'required' },
  handler: async (_args, ctx) => {
    await ctx.step('wait', () => new Promise<number>((r) => setTimeout(() => r(1), 300)));
    return textResult('paused');
  },
});

let server: DurableTestServer;
beforeAll(async () => {
  server = await startDurableServer({ toolSets: [{ tools: [pause] }], keepAliveMs: 200 });
});
afterAll(() => server.close());

const headers = (method: string, extra: Record<string, string> = {}): Record<string, string> => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': method,
  ...extra,
});

async function create(): Promise<string> {
  const res = await rpc(server.url, 'tools/call', { name: 'pause', arguments: {} }, { caps: CAPS });
  const { result } = lastMessage(res) as { result: { resultType: string; taskId: string } };
  expect(result.resultType).toBe('task');
  return result.taskId;
}

type Msg = { method?: string; params?: Record<string, unknown> };

/** Opens a listen for `taskId` and reads its raw text until `done` holds of the messages so far (or 10 s pass). */
async function listen(
  taskId: string,
  extra: Record<string, string>,
  done: (messages: Msg[]) => boolean,
): Promise<{ status: number; headers: Headers; text: string; messages: Msg[] }> {
  const abort = new AbortController();
  const res = await fetch(server.url, {
    method: 'POST',
    headers: headers('subscriptions/listen', extra),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'listen-1',
      method: 'subscriptions/listen',
      params: { notifications: { taskIds: [taskId] }, _meta: META },
    }),
    signal: abort.signal,
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    const { done: ended, value } = await reader.read();
    if (ended) break;
    text += decoder.decode(value, { stream: true });
    // Only whole events count: the last block may still be arriving.
    const whole = text.slice(0, text.lastIndexOf('\n\n') + 2);
    if (done(parseSse(whole).messages as Msg[])) break;
  }
  abort.abort();
  await reader.cancel().catch(() => undefined);
  const whole = text.slice(0, text.lastIndexOf('\n\n') + 2);
  return {
    status: res.status,
    headers: res.headers,
    text: whole,
    messages: parseSse(whole).messages as Msg[],
  };
}

const statusOf = (m: Msg | undefined): unknown => m?.params?.status;
const finished = (ms: Msg[]): boolean => ms.some((m) => statusOf(m) === 'completed');

describe('subscriptions/listen over POST-SSE, without GET, Last-Event-ID or a session', () => {
  it('streams a task to its end on the POST itself: no event ids, no session minted or echoed', async () => {
    const taskId = await create();
    const stream = await listen(taskId, { 'mcp-session-id': 'session-the-client-made-up' }, finished);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.headers.get('mcp-session-id')).toBeNull();
    // Events carry a type and data only: no id a client could resume from, no retry hint.
    const fields = stream.text.split('\n').filter((l) => l !== '' && !l.startsWith(':'));
    expect(fields.filter((l) => l.startsWith('data:')).length).toBeGreaterThan(1);
    for (const line of fields) expect(line).toMatch(/^(data|event): /);

    const [ack, ...pushed] = stream.messages;
    expect(ack?.method).toBe('notifications/subscriptions/acknowledged');
    expect(ack?.params?.notifications).toEqual({ taskIds: [taskId] });
    for (const m of stream.messages) expect(validateMessage(m, { tasksNegotiated: true })).toEqual([]);
    expect(pushed.every((m) => m.method === 'notifications/tasks' && m.params?.taskId === taskId)).toBe(true);
    expect(pushed.map(statusOf).at(-1)).toBe('completed');
  });

  it('replays nothing for a Last-Event-ID: listening again gives the current snapshot, as without the header', async () => {
    const taskId = await create();
    const first = await listen(taskId, {}, finished);
    expect(first.messages.map(statusOf)).toContain('completed');
    // Came back "after" the first stream: with an id from it, or with nothing, the answer is the same.
    const twoMessages = (ms: Msg[]): boolean => ms.length >= 2;
    const resumed = await listen(taskId, { 'last-event-id': 'listen-1:3' }, twoMessages);
    const fresh = await listen(taskId, {}, twoMessages);
    expect(resumed.messages.slice(0, 2)).toEqual(fresh.messages.slice(0, 2));
    expect(resumed.messages.map((m) => m.method).slice(0, 2)).toEqual([
      'notifications/subscriptions/acknowledged',
      'notifications/tasks',
    ]);
    expect(statusOf(resumed.messages[1])).toBe('completed');
  });

  it.each(['GET', 'DELETE'])(
    '%s on the endpoint is 405 Allow: POST, with a Last-Event-ID and a session id too',
    async (method) => {
      const res = await fetch(server.url, {
        method,
        headers: {
          accept: 'text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'last-event-id': 'listen-1:3',
          'mcp-session-id': 'session-the-client-made-up',
        },
      });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(res.headers.get('mcp-session-id')).toBeNull();
      await res.body?.cancel();
    },
  );
});
