// The 2025-11-25 wire holds to the modern wire's rules wherever it can: routing headers, when a request sends them,
// must agree with its body; an unknown session is 404 (so the client initializes again); answers to server→client
// requests keep the depth limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import conformance from '../../examples/conformance/index.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';
import {
  legacyClientFor,
  legacyConnect,
  tokenAuthenticator,
  type LegacyClient,
} from '../support/legacy-client.js';
import { post } from '../support/server.js';

let server: DurableTestServer;
let client: LegacyClient;

beforeAll(async () => {
  server = await startDurableServer({ toolSets: [conformance] });
  client = await legacyConnect(server.url);
});
afterAll(() => server.close());

const withHeaders = (headers: Record<string, string>) =>
  legacyClientFor(server.url, client.sessionId, headers);
const regionCall = { name: 'test_custom_header', arguments: { region: 'us' } };

describe('routing headers on the legacy wire', () => {
  it('a request that sends none runs as before', async () => {
    expect(await client.result('tools/call', regionCall)).toMatchObject({ content: [{ text: 'region=us' }] });
  });

  it('Mcp-Method must name the method of the body', async () => {
    const lying = await withHeaders({ 'mcp-method': 'tools/list' });
    expect(await lying.error('tools/call', regionCall)).toMatchObject({ code: -32020 });
  });

  it('Mcp-Param-* must agree with the arguments', async () => {
    const lying = await withHeaders({
      'mcp-method': 'tools/call',
      'mcp-name': 'test_custom_header',
      'mcp-param-region': 'eu',
    });
    expect(await lying.error('tools/call', regionCall)).toMatchObject({ code: -32020 });
  });

  it('agreeing headers pass', async () => {
    const honest = await withHeaders({
      'mcp-method': 'tools/call',
      'mcp-name': 'test_custom_header',
      'mcp-param-region': 'us',
    });
    expect(await honest.result('tools/call', regionCall)).toMatchObject({ content: [{ text: 'region=us' }] });
  });
});

describe('sessions per principal', () => {
  it('initialize beyond the cap is 429; another principal, or an ended session, makes room', async () => {
    const capped = await startDurableServer({
      toolSets: [conformance],
      authenticator: tokenAuthenticator({
        alice: { tenant: 't', principal: 'alice' },
        bob: { tenant: 't', principal: 'bob' },
      }),
      legacy: { maxSessionsPerPrincipal: 2 },
    });
    try {
      const as = (token: string) => ({ authorization: `Bearer ${token}` });
      const first = await legacyConnect(capped.url, as('alice'));
      await legacyConnect(capped.url, as('alice'));
      await expect(legacyConnect(capped.url, as('alice'))).rejects.toThrow(/429|Too many open sessions/);
      const refused = await post(
        capped.url,
        {
          jsonrpc: '2.0',
          id: 3,
          method: 'initialize',
          params: {
            protocolVersion: '2025-11-25',
            capabilities: {},
            clientInfo: { name: 'x', version: '1' },
          },
        },
        as('alice'),
      );
      expect(refused.status).toBe(429);
      expect(refused.messages[0]).toMatchObject({ id: 3, error: { code: 429, data: { limit: 2 } } });
      await legacyConnect(capped.url, as('bob'));
      expect(await first.end()).toBe(200);
      await legacyConnect(capped.url, as('alice'));
    } finally {
      await capped.close();
    }
  });
});

describe('sessions and bodies', () => {
  it('a POST on an unknown session is 404, with the request id', async () => {
    const res = await post(
      server.url,
      { jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} },
      { 'mcp-session-id': 'no-such-session', 'mcp-protocol-version': '2025-11-25' },
    );
    expect(res.status).toBe(404);
    expect(res.messages[0]).toMatchObject({ id: 9, error: { message: 'Session not found' } });
  });

  it('an answer nested deeper than the depth limit is refused', async () => {
    const deep = `${'['.repeat(100)}1${']'.repeat(100)}`;
    const res = await fetch(server.url, {
      method: 'POST',
      headers: {
        ...client.headers,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: `{"jsonrpc":"2.0","id":"x","result":{"deep":${deep}}}`,
    });
    expect(res.status).toBe(400);
  });
});

describe('session state stays small', () => {
  it('resources/subscribe keeps at most 64 URIs per session, each of at most 1,024 characters', async () => {
    const session = await legacyConnect(server.url);
    const long = `test://${'x'.repeat(3 * 1024 * 1024)}`;
    expect(await session.error('resources/subscribe', { uri: long })).toMatchObject({ code: -32602 });
    for (let i = 0; i < 64; i++) await session.result('resources/subscribe', { uri: `test://watched/${i}` });
    expect(await session.error('resources/subscribe', { uri: 'test://one-more' })).toMatchObject({
      code: -32602,
    });
    expect(await session.result('resources/subscribe', { uri: 'test://watched/3' })).toEqual({}); // already kept
  });

  it('resources/subscribe is an unknown method on a server without resources', async () => {
    const bare = await startDurableServer({ toolSets: [{ tools: [] }] });
    try {
      const onBare = await legacyConnect(bare.url);
      expect(await onBare.error('resources/subscribe', { uri: 'anything://x' })).toMatchObject({
        code: -32601,
      });
    } finally {
      await bare.close();
    }
  });
});
