// Details of the 2025-11-25 wire that real clients tripped on, checked on the raw wire: ids on every error the wire
// can attribute (and `"id":null` where it cannot), 404 or 400 (never a 2026-07-28 header error) for requests on no
// session, capabilities offered per negotiated revision, and a cancelled request's exchange that ends.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStaticTokenAuthenticator } from '../../src/index.js';
import demo from '../../examples/demo/index.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';
import { LEGACY_VERSION, legacyConnect, type LegacyClient } from '../support/legacy-client.js';
import { openSse, post } from '../support/server.js';

type Json = Record<string, unknown>;

const TOKEN = 'wire-details-token-0123';

let open: DurableTestServer;
let guarded: DurableTestServer;
let client: LegacyClient;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'legacy-wire-'));
  const tokens = join(dir, 'tokens.json');
  writeFileSync(tokens, JSON.stringify({ tokens: [{ token: TOKEN, tenant: 'acme', principal: 'alice' }] }));
  open = await startDurableServer({ toolSets: [demo] });
  guarded = await startDurableServer({
    toolSets: [demo],
    authenticator: createStaticTokenAuthenticator(tokens),
  });
  client = await legacyConnect(open.url);
});

afterAll(async () => {
  await Promise.all([open?.close(), guarded?.close()]);
});

const legacyHeaders = (extra: Record<string, string> = {}): Record<string, string> => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  ...extra,
});

describe('401 bodies of the 2025-11-25 wire', () => {
  it('echo the request id when the body shows it', async () => {
    const res = await post(
      guarded.url,
      { jsonrpc: '2.0', id: 'init-7', method: 'initialize', params: {} },
      {},
    );
    expect(res.status).toBe(401);
    expect(JSON.parse(res.text)).toMatchObject({
      id: 'init-7',
      error: { message: 'Authentication required' },
    });
  });

  it('carry "id": null when the id cannot be read (a GET, or a body too large to read unauthenticated)', async () => {
    const get = await fetch(guarded.url, {
      headers: {
        accept: 'text/event-stream',
        'mcp-session-id': 'any',
        'mcp-protocol-version': LEGACY_VERSION,
      },
    });
    expect(get.status).toBe(401);
    const getBody = (await get.json()) as Json;
    expect(getBody).toHaveProperty('id', null);
    expect(getBody.error).toMatchObject({ message: 'Authentication required' });
    const large = await fetch(guarded.url, {
      method: 'POST',
      headers: legacyHeaders(),
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping', params: { pad: 'x'.repeat(20_000) } }),
    });
    expect(large.status).toBe(401);
    expect((await large.json()) as Json).toHaveProperty('id', null);
  });

  it('leave the id out for a 2026-07-28 request, whose schema has no null id', async () => {
    const large = await fetch(guarded.url, {
      method: 'POST',
      headers: legacyHeaders({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'ping' }),
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping', params: { pad: 'x'.repeat(20_000) } }),
    });
    expect(large.status).toBe(401);
    expect((await large.json()) as Json).not.toHaveProperty('id');
  });
});

describe('requests on no session', () => {
  it('a request naming no session, from a client that says it speaks 2025-11-25, is told to initialize', async () => {
    const res = await fetch(open.url, {
      method: 'POST',
      headers: legacyHeaders({ 'mcp-protocol-version': LEGACY_VERSION }),
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { id: number; error: { code: number; message: string } };
    expect(body.id).toBe(9);
    expect(body.error.code).toBe(-32600);
    expect(body.error.message).toContain('Mcp-Session-Id');
    expect(body.error.message).not.toContain('Mcp-Method');
  });

  it('an answer to a server→client request on an unknown session is 404, as any request there', async () => {
    const res = await fetch(open.url, {
      method: 'POST',
      headers: legacyHeaders({ 'mcp-session-id': 'no-such-session', 'mcp-protocol-version': LEGACY_VERSION }),
      body: JSON.stringify({ jsonrpc: '2.0', id: 'x', result: {} }),
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as Json).id).toBeNull();
  });
});

describe('initialize per negotiated revision', () => {
  const initialize = async (protocolVersion: string): Promise<Json> => {
    const res = await post(open.url, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    return (res.messages[0] as { result: Json }).result;
  };

  it('offers the tasks capability only from 2025-11-25, where it exists', async () => {
    const older = await initialize('2025-06-18');
    expect(older.protocolVersion).toBe('2025-06-18');
    expect(older.capabilities).not.toHaveProperty('tasks');
    expect(older.capabilities).toHaveProperty('tools');
    const current = await initialize('2025-11-25');
    expect(current.capabilities).toHaveProperty('tasks');
  });
});

describe('notifications/cancelled', () => {
  it('ends the cancelled request: its stream closes without a response', async () => {
    const stream = await openSse(
      open.url,
      {
        jsonrpc: '2.0',
        id: 'to-cancel',
        method: 'tools/call',
        params: { name: 'greet_person', arguments: {} },
      },
      client.headers,
    );
    const asked = (await stream.next(3_000)) as Json;
    expect(asked.method).toBe('elicitation/create');
    expect(await client.notify('notifications/cancelled', { requestId: 'to-cancel', reason: 'user' })).toBe(
      202,
    );
    // The stream ends (next() gives nothing more), and no response for the request ever came.
    expect(await stream.next(5_000)).toBeUndefined();
    expect(stream.ended).toBe(true);
  });
});

describe('a blocking tasks/result', () => {
  it('keeps its stream alive with comments while it waits, then closes it for the client to resume', async () => {
    const server = await startDurableServer({
      toolSets: [demo],
      keepAliveMs: 50,
      legacy: { resultWaitMs: 600 },
    });
    try {
      const waiting = await legacyConnect(server.url, {}, {});
      // generate_report prepares its outline for 1.5 s, well past the 600 ms window.
      const created = await waiting.result('tools/call', {
        name: 'generate_report',
        arguments: {},
        task: { ttl: 60_000 },
      });
      const taskId = (created.task as { taskId: string }).taskId;
      const res = await fetch(server.url, {
        method: 'POST',
        headers: legacyHeaders(waiting.headers),
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/result', params: { taskId } }),
      });
      const text = await res.text();
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(text.match(/^: keep-alive$/gm)?.length ?? 0).toBeGreaterThanOrEqual(2);
      expect(text).toMatch(/^retry: \d+$/m);
      expect(text).not.toContain('"error"');
    } finally {
      await server.close();
    }
  });
});
