import { describe, expect, it } from 'vitest';
import { createHttpTransport } from './http-transport.js';
import { InvalidResponseError, StreamEndedError } from './errors.js';
import { readMessage, SseParser, type SseEvent } from './sse-parser.js';
import { resubscribeAfterMs, resubscribeDelayMs, MAX_STREAM_RETRY_MS } from './task-stream.js';

/** Every event of `text` fed in pieces cut at `cuts`. */
function parse(text: string, cuts: number[] = []): { events: SseEvent[]; parser: SseParser } {
  const parser = new SseParser();
  const events: SseEvent[] = [];
  let from = 0;
  for (const cut of [...cuts, text.length]) {
    events.push(...parser.push(text.slice(from, cut)));
    from = cut;
  }
  return { events, parser };
}

const STREAM = [
  ': a comment, then an event split over two data lines',
  'id: 1',
  'data: {"jsonrpc":"2.0",',
  'data: "method":"notifications/progress"}',
  '',
  'event: ping',
  'data: not JSON and not ours',
  '',
  'retry: 1500',
  'id: 2',
  'data: {"jsonrpc":"2.0","id":7,"result":{}}',
  '',
  '',
].join('\n');

const EXPECTED: SseEvent[] = [
  { type: 'message', id: '1', data: '{"jsonrpc":"2.0",\n"method":"notifications/progress"}' },
  { type: 'ping', id: undefined, data: 'not JSON and not ours' },
  { type: 'message', id: '2', data: '{"jsonrpc":"2.0","id":7,"result":{}}' },
];

describe('SseParser', () => {
  it('reads events, ids, types and the retry field, comments left out', () => {
    const { events, parser } = parse(STREAM);
    expect(events).toEqual(EXPECTED);
    expect(parser.lastEventId).toBe('2');
    expect(parser.retryMs).toBe(1500);
  });

  it('gives the same events however the stream is cut into chunks', () => {
    for (let cut = 1; cut < STREAM.length; cut++) expect(parse(STREAM, [cut]).events).toEqual(EXPECTED);
    const everyChar = Array.from({ length: STREAM.length - 1 }, (_, i) => i + 1);
    expect(parse(STREAM, everyChar).events).toEqual(EXPECTED);
  });

  it('takes CRLF and CR line ends, also with a CRLF split between two chunks', () => {
    const crlf = STREAM.replaceAll('\n', '\r\n');
    expect(parse(crlf).events).toEqual(EXPECTED);
    const split = crlf.indexOf('\r\n\r\n') + 1;
    expect(parse(crlf, [split, split + 2]).events).toEqual(EXPECTED);
    // A CR ending a chunk may be the first half of a CRLF: the line ends once the next character is seen.
    expect(parse(`${STREAM.replaceAll('\n', '\r')}:\r`).events).toEqual(EXPECTED);
  });

  it('keeps the last id across events without one, and dispatches nothing before the blank line', () => {
    const parser = new SseParser();
    expect(parser.push('id: a\ndata: 1\n\ndata: 2\n')).toEqual([{ type: 'message', id: 'a', data: '1' }]);
    expect(parser.push('\n')).toEqual([{ type: 'message', id: undefined, data: '2' }]);
    expect(parser.lastEventId).toBe('a');
  });

  it('ignores a retry field that is not a number, and unknown fields', () => {
    const { events, parser } = parse('retry: soon\nfoo: bar\ndata: 1\n\n');
    expect(events).toEqual([{ type: 'message', id: undefined, data: '1' }]);
    expect(parser.retryMs).toBeUndefined();
  });
});

describe('readMessage', () => {
  it("reads a message event's JSON, passes over other types and empty data, and says why data is not JSON", () => {
    expect(readMessage({ type: 'message', id: undefined, data: '{"a":1}' })).toEqual({
      ok: true,
      message: { a: 1 },
    });
    expect(readMessage({ type: 'ping', id: undefined, data: '{"a":1}' })).toBeUndefined();
    expect(readMessage({ type: 'message', id: 'mark', data: '' })).toBeUndefined();
    const bad = readMessage({ type: 'message', id: undefined, data: '{"a":' });
    expect(bad).toMatchObject({ ok: false, reason: expect.stringContaining('{"a":') as unknown });
  });
});

/** The HTTP transport over a server that answers every POST with these SSE bytes, in these chunks. */
function transportReplying(...chunks: string[]) {
  const fetch = (async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
        controller.close();
      },
    });
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  }) as typeof globalThis.fetch;
  return createHttpTransport({ url: 'http://test.invalid/mcp', fetch, retry: false });
}

const request = { id: 7, method: 'tools/list', params: {} };

describe('the HTTP transport reading an event stream', () => {
  it('answers with the response, notifications handed over, events of other types passed over', async () => {
    const seen: unknown[] = [];
    const reply = await transportReplying(STREAM.slice(0, 40), STREAM.slice(40)).send(request, {
      onNotification: (m) => seen.push(m),
    });
    expect(reply.message).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
    expect(seen).toEqual([{ jsonrpc: '2.0', method: 'notifications/progress' }]);
  });

  it('fails the request with a clear error when an event is not JSON', async () => {
    const sent = transportReplying('data: {"jsonrpc":"2.0","method":\n\n').send(request);
    await expect(sent).rejects.toThrow(InvalidResponseError);
    await expect(sent).rejects.toThrow(/stream for request 7 carried an event that is not JSON/);
  });

  it('reports a stream that ends without the response with its retry and last event id', async () => {
    const sent = transportReplying('id: w-1\ndata:\n\nretry: 2500\n\n').send(request);
    await expect(sent).rejects.toThrow(StreamEndedError);
    await expect(sent).rejects.toMatchObject({ requestId: 7, retryMs: 2500, lastEventId: 'w-1' });
  });
});

describe('resubscribing after a stream ended', () => {
  const noJitter = (): number => 0.5;
  it("waits for the stream's retry when it is longer than the back-off, up to a bound", () => {
    const backoff = resubscribeDelayMs(0, noJitter);
    const ended = (retryMs: number | undefined) => ({ kind: 'ended' as const, openMs: 5, retryMs });
    expect(resubscribeAfterMs(ended(undefined), 0, noJitter)).toBe(backoff);
    expect(resubscribeAfterMs(ended(0), 0, noJitter)).toBe(backoff);
    expect(resubscribeAfterMs(ended(backoff + 4_000), 0, noJitter)).toBe(backoff + 4_000);
    expect(resubscribeAfterMs(ended(10 * MAX_STREAM_RETRY_MS), 0, noJitter)).toBe(MAX_STREAM_RETRY_MS);
  });
});
