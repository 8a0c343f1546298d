// Legacy 2025-11-25 sessions on the shared endpoint: stored with idle expiry, DELETE, 404 for ended sessions, and
// the GET stream relaying list changes and updates of subscribed resources.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import conformance from '../../examples/conformance/index.js';
import { defineTool, textResult } from '../../src/index.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';
import { legacyConnect, LEGACY_VERSION } from '../support/legacy-client.js';
import { post } from '../support/server.js';

const IDLE_MS = 60_000;
let clock = Date.now();
let server: DurableTestServer;

beforeAll(async () => {
  server = await startDurableServer({
    toolSets: [conformance],
    legacy: { sessionIdleMs: IDLE_MS, now: () => clock },
  });
});
afterAll(async () => {
  await server.close();
});

const listTools = (sessionId: string) =>
  post(
    server.url,
    { jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} },
    { 'mcp-session-id': sessionId, 'mcp-protocol-version': LEGACY_VERSION },
  );

describe('legacy sessions', () => {
  it('keeps a used session alive and ends an idle one (404, then the client starts over)', async () => {
    const client = await legacyConnect(server.url);
    clock += IDLE_MS - 1_000;
    expect((await listTools(client.sessionId)).status).toBe(200);
    // The request extended the idle expiry.
    clock += IDLE_MS - 1_000;
    expect((await listTools(client.sessionId)).status).toBe(200);
    clock += IDLE_MS + 1;
    const ended = await listTools(client.sessionId);
    expect(ended.status).toBe(404);
    expect(ended.messages[0]).toMatchObject({ id: 9, error: { code: -32600, message: 'Session not found' } });
    expect((await legacyConnect(server.url)).sessionId).not.toBe(client.sessionId);
  });

  it('ends a session on DELETE; later requests, GET and DELETE get 404', async () => {
    const client = await legacyConnect(server.url);
    expect(await client.result('ping')).toEqual({});
    expect(await client.end()).toBe(200);
    expect((await listTools(client.sessionId)).status).toBe(404);
    expect(await client.end()).toBe(404);
    const get = await client.listen();
    expect(get.status).toBe(404);
    get.close();
  });

  it('answers GET without a session with 405, as the modern wire does', async () => {
    const res = await fetch(server.url, { method: 'GET', headers: { accept: 'text/event-stream' } });
    await res.body?.cancel();
    expect(res.status).toBe(405);
  });

  it('stores logging/setLevel in the session', async () => {
    const client = await legacyConnect(server.url);
    expect(await client.result('logging/setLevel', { level: 'error' })).toEqual({});
    expect((await client.error('logging/setLevel', { level: 'loud' })).code).toBe(-32602);
  });
});

describe('the legacy GET stream', () => {
  it('relays list changes and updates of subscribed resources only, without modern _meta', async () => {
    const client = await legacyConnect(server.url);
    const init = await post(server.url, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: { name: 't', version: '0' } },
    });
    const caps = (init.messages[0] as { result: { capabilities: Record<string, unknown> } }).result
      .capabilities;
    expect(caps).toMatchObject({
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
    });

    const stream = await client.listen();
    expect(stream.status).toBe(200);
    const control = server.runtime.server.control;
    // The stream listens as soon as it is open; give the relay a moment to subscribe.
    await new Promise((r) => setTimeout(r, 100));
    control.addTool(defineTool({ name: 'added_later', description: 'x', handler: () => textResult('x') }));
    expect(await stream.next()).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
      params: {},
    });

    control.resourceUpdated('test://static-text');
    expect(await client.result('resources/subscribe', { uri: 'test://static-text' })).toEqual({});
    await new Promise((r) => setTimeout(r, 100));
    control.resourceUpdated('test://other');
    control.resourceUpdated('test://static-text');
    expect(await stream.next()).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri: 'test://static-text' },
    });
    expect(await client.result('resources/unsubscribe', { uri: 'test://static-text' })).toEqual({});
    await new Promise((r) => setTimeout(r, 100));
    control.resourceUpdated('test://static-text');
    expect(await stream.next(300)).toBeUndefined();

    // Ending the session closes its stream.
    expect(await client.end()).toBe(200);
    expect(await stream.next(500)).toBeUndefined();
    stream.close();
  });
});
