import { describe, expect, it } from 'vitest';
import {
  createFakeOAuthServer,
  ISSUER,
  SERVER_URL,
  type FakeOAuthOptions,
} from '../../../test/support/fake-oauth-server.js';
import { createClient } from '../client.js';
import { createHttpTransport } from '../http-transport.js';
import { createMemoryTokenStore } from './memory-store.js';
import { createOAuth } from './session.js';
import { OAuthFlowError, SignInRequiredError, type OAuthOptions } from './types.js';

const HOUR = 3_600_000;

function setup(fake: FakeOAuthOptions = {}, extra: Partial<OAuthOptions> = {}) {
  const server = createFakeOAuthServer(fake);
  const clock = { now: 1_000_000 };
  const store = createMemoryTokenStore();
  const auth = createOAuth({
    serverUrl: SERVER_URL,
    store,
    fetch: server.fetch,
    prompt: server.prompt,
    now: () => clock.now,
    ...extra,
  });
  const transport = createHttpTransport({ url: SERVER_URL, auth, fetch: server.fetch, retry: false });
  const send = (method: string) =>
    transport.send({
      id: 1,
      method,
      params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
    });
  return { server, clock, store, auth, send };
}

describe('createOAuth', () => {
  it('signs in on a 401 (registration, PKCE code, resource) and sends the request again with the token', async () => {
    const { server, send, auth } = setup();
    const reply = await send('tools/list');
    expect(reply.status).toBe(200);
    expect(server.counts).toMatchObject({ register: 1, authorize: 1, token: 1, mcp: 2 });
    expect(server.tokenResources).toEqual([SERVER_URL]);
    const record = await auth.record();
    expect(record).toMatchObject({
      resource: SERVER_URL,
      issuer: ISSUER,
      client: { registeredBy: 'dynamic' },
    });
  });

  it('signs createClient in, for its requests and for sendEvent alike', async () => {
    const { server, auth } = setup();
    const client = createClient({ url: SERVER_URL, auth, fetch: server.fetch, retry: false, tasks: false });
    expect(await client.request('tools/list')).toMatchObject({ ok: true });
    expect(await client.sendEvent('task-1', 'approved', { ok: true })).toBe('delivered');
    expect(server.counts.authorize).toBe(1);
    await client.close();
  });

  it('refreshes the token once it is within refreshSkewMs of expiring, and not before', async () => {
    const { server, clock, auth } = setup({}, { refreshSkewMs: 60_000 });
    const first = (await auth.signIn()).tokens?.accessToken;
    clock.now += HOUR - 61_000;
    expect(await auth.token()).toBe(first);
    expect(server.counts.refresh).toBe(0);
    clock.now += 2_000;
    const second = await auth.token();
    expect(server.counts.refresh).toBe(1);
    expect(second).not.toBe(first);
    expect(second).toBe((await auth.record())?.tokens?.accessToken);
  });

  it('sends the old token when the authorization server cannot be reached to refresh it', async () => {
    const { server, clock, auth } = setup();
    const first = (await auth.signIn()).tokens?.accessToken;
    clock.now += HOUR;
    server.down = true;
    expect(await auth.token()).toBe(first);
    server.down = false;
    expect(await auth.token()).not.toBe(first);
  });

  it('refreshes on a 401, and signs in again when the refreshed token is refused as well', async () => {
    const { server, auth } = setup();
    await auth.signIn();
    const refused = () => new Response('{}', { status: 401, headers: { 'www-authenticate': 'Bearer' } });
    expect(await auth.challenge(refused())).toBe(true);
    expect(server.counts).toMatchObject({ refresh: 1, authorize: 1 });
    expect(await auth.challenge(refused())).toBe(true);
    expect(server.counts).toMatchObject({ refresh: 1, authorize: 2 });
  });

  it('shares one refresh among concurrent callers', async () => {
    const { server, clock, auth } = setup({ tokenDelayMs: 30 });
    await auth.signIn();
    clock.now += HOUR;
    const tokens = await Promise.all(Array.from({ length: 5 }, () => auth.token()));
    expect(server.counts.refresh).toBe(1);
    expect(new Set(tokens).size).toBe(1);
    expect(tokens[0]).toBeDefined();
  });

  it('shares one sign-in among concurrent challenges', async () => {
    const { server, send } = setup({ tokenDelayMs: 30 });
    const replies = await Promise.all([send('tools/list'), send('tools/list'), send('tools/list')]);
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(server.counts.authorize).toBe(1);
  });

  it('steps up on insufficient_scope to the union of the granted and the challenged scopes', async () => {
    const { server, send, auth } = setup({ required: { 'tools/list': ['read'], 'tools/call': ['write'] } });
    expect((await send('tools/list')).status).toBe(200);
    expect((await send('tools/call')).status).toBe(200);
    expect(server.authorizeScopes).toEqual(['read', 'read write']);
    expect((await auth.record())?.tokens?.scope).toBe('read write');
  });

  it('lets a 403 stand when the challenged scope was granted already', async () => {
    const { server, auth, send } = setup({ required: { 'tools/list': ['read'] } });
    await send('tools/list');
    const res = new Response('{}', {
      status: 403,
      headers: { 'www-authenticate': 'Bearer error="insufficient_scope", scope="read"' },
    });
    expect(await auth.challenge(res)).toBe(false);
    expect(server.counts.authorize).toBe(1);
  });

  it('signs in again when the refresh is refused, and needs a person then', async () => {
    const { server, clock, auth, store } = setup({ refuseRefresh: true });
    await auth.signIn();
    clock.now += HOUR;
    expect(await auth.token()).toBeUndefined();
    expect((await auth.record())?.tokens).toBeUndefined();
    const promptless = createOAuth({ serverUrl: SERVER_URL, store, fetch: server.fetch });
    const res = new Response('{}', { status: 401, headers: { 'www-authenticate': 'Bearer' } });
    await expect(promptless.challenge(res)).rejects.toBeInstanceOf(SignInRequiredError);
  });

  it('forgets a sign-in from another authorization server and registers with the new one', async () => {
    const store = createMemoryTokenStore();
    await store.set({
      resource: SERVER_URL,
      issuer: 'http://127.0.0.1:9999',
      client: { clientId: 'old-client', authMethod: 'none', registeredBy: 'dynamic' },
      tokens: { accessToken: 'old-token', tokenType: 'Bearer' },
      updatedAt: new Date().toISOString(),
    });
    const { server, send, auth } = setup({}, { store });
    expect((await send('tools/list')).status).toBe(200);
    expect(server.counts.register).toBe(1);
    expect(await auth.record()).toMatchObject({ issuer: ISSUER, client: { clientId: 'client-1' } });
  });

  it('revokes both tokens on sign-out and forgets the record', async () => {
    const { server, auth } = setup();
    await auth.signIn();
    expect(await auth.signOut()).toEqual({ removed: true, revoked: true });
    expect(server.counts.revoke).toBe(2);
    expect(await auth.record()).toBeUndefined();
    expect(await auth.signOut()).toEqual({ removed: false, revoked: false });
  });

  it('puts no code, verifier or token in its errors', async () => {
    const { server, auth } = setup({ refuseCode: true });
    const err = await auth.signIn().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OAuthFlowError);
    expect((err as OAuthFlowError).code).toBe('invalid_grant');
    const text = `${(err as Error).message} ${(err as Error).stack ?? ''}`;
    expect(server.secrets.length).toBeGreaterThanOrEqual(2);
    for (const secret of server.secrets) expect(text).not.toContain(secret);
  });

  it('gets tokens by the client credentials grant for a machine client', async () => {
    const { server, send } = setup(
      {},
      {
        prompt: undefined,
        client: { clientId: 'machine', clientSecret: 's3cret-value' },
        clientCredentials: true,
      },
    );
    expect((await send('tools/list')).status).toBe(200);
    expect(server.counts).toMatchObject({ authorize: 0, register: 0, token: 1 });
  });

  it('uses the device authorization grant where the prompt and the server offer it', async () => {
    const shown: string[] = [];
    const server = createFakeOAuthServer({ device: true, scopesSupported: ['read'] });
    const auth = createOAuth({
      serverUrl: SERVER_URL,
      fetch: server.fetch,
      prompt: { ...server.prompt, device: (p) => void shown.push(`${p.verificationUri} ${p.userCode}`) },
    });
    const record = await auth.signIn();
    expect(shown).toEqual([`${ISSUER}/activate ABCD-EFGH`]);
    expect(server.counts.authorize).toBe(0);
    expect(record.tokens?.scope).toBe('read');
  });
});
