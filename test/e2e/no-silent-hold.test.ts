// No response stays silent longer than the keep-alive interval: a synchronous call still running by then turns into an
// event stream with comment keep-alives (so a balancer's read timeout never cuts it), on both wires; a quick one stays
// JSON, and a client that takes only JSON still gets JSON.
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelope, mcpHeaders, startServe, type ServeProcess } from '../support/cli.js';
import { legacyConnect } from '../support/legacy-client.js';

let dir: string;
let server: ServeProcess;
const KEEP_ALIVE_MS = 200;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'durable-mcp-hold-'));
  server = await startServe([
    '--port',
    '0',
    '--store',
    join(dir, 'tasks.db'),
    '--keep-alive-ms',
    String(KEEP_ALIVE_MS),
  ]);
});

afterAll(async () => {
  server.child.kill('SIGKILL');
  await server.exited;
  rmSync(dir, { recursive: true, force: true });
});

interface Timed {
  status: number;
  contentType: string;
  body: string;
  /** When each chunk of the body arrived, in ms since the request was sent. */
  chunks: number[];
}

/** A POST whose body is read chunk by chunk, to see when bytes arrived. */
function timedPost(url: string, headers: Record<string, string>, body: unknown): Promise<Timed> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      const chunks: number[] = [];
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        chunks.push(Date.now() - started);
        text += c;
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          contentType: String(res.headers['content-type']),
          body: text,
          chunks,
        }),
      );
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const waitCall = (ms: number) => ({
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: { name: 'wait', arguments: { ms }, _meta: envelope() },
});

/** The data of the last SSE `message` event. */
const lastEvent = (body: string): unknown => {
  const data = [...body.matchAll(/^data: (.+)$/gm)].map((m) => m[1] as string);
  return JSON.parse(data[data.length - 1] as string);
};

describe('no silent hold', () => {
  it('turns a long synchronous call into an event stream with keep-alives, ending with its result', async () => {
    const res = await timedPost(server.url, mcpHeaders('tools/call', 'wait'), waitCall(1_500));
    expect(res.status).toBe(200);
    expect(res.contentType).toMatch(/^text\/event-stream/);
    // Keep-alives while the tool ran, the first one after about one interval rather than at the end.
    expect((res.body.match(/^: keep-alive$/gm) ?? []).length).toBeGreaterThanOrEqual(2);
    expect(res.chunks[0]).toBeLessThan(1_200);
    expect(lastEvent(res.body)).toMatchObject({
      jsonrpc: '2.0',
      id: 7,
      result: { content: [{ type: 'text', text: 'waited 1500 ms' }] },
    });
  });

  it('answers a quick call as JSON, and a client that takes only JSON always with JSON', async () => {
    const quick = await timedPost(server.url, mcpHeaders('tools/call', 'wait'), waitCall(0));
    expect(quick.contentType).toMatch(/^application\/json/);
    const jsonOnly = await timedPost(
      server.url,
      { ...mcpHeaders('tools/call', 'wait'), accept: 'application/json' },
      waitCall(600),
    );
    expect(jsonOnly.contentType).toMatch(/^application\/json/);
    expect(JSON.parse(jsonOnly.body)).toMatchObject({
      id: 7,
      result: { content: [{ text: 'waited 600 ms' }] },
    });
  });

  it('does the same on the 2025-11-25 wire', async () => {
    const client = await legacyConnect(server.url);
    const res = await timedPost(
      server.url,
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': client.sessionId,
        'mcp-protocol-version': '2025-11-25',
      },
      { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'wait', arguments: { ms: 1_000 } } },
    );
    expect(res.contentType).toMatch(/^text\/event-stream/);
    expect(res.body).toMatch(/^: keep-alive$/m);
    expect(lastEvent(res.body)).toMatchObject({ id: 9, result: { content: [{ text: 'waited 1000 ms' }] } });
  });
});
