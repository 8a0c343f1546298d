// The test authorization server against `durable-mcp serve` in JWT mode: the 401 challenge and RFC 9728 metadata
// name it, its tokens are accepted for their resource until they expire; and its grants behave as the RFCs say.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { envelope, killedAfterEach, mcpHeaders, startServe } from '../support/cli.js';
import {
  jwtServeArgs,
  startAuthorizationServer,
  type AuthorizationServer,
} from '../support/oauth-authorization-server.js';
import { refreshDirectly, signInDirectly } from '../support/oauth-direct-sign-in.js';

/** The clock skew `serve` tolerates on `exp` (src/auth/jwt.ts). */
const SERVE_LEEWAY_SECONDS = 30;

const procs = killedAfterEach();
const servers: AuthorizationServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function authorizationServer(
  options: Parameters<typeof startAuthorizationServer>[0] = {},
): Promise<AuthorizationServer> {
  const as = await startAuthorizationServer(options);
  servers.push(as);
  return as;
}

/** `serve` in JWT mode trusting `as`, on a fresh SQLite file. */
async function serveFor(as: AuthorizationServer) {
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-oauth-'));
  dirs.push(dir);
  const p = await startServe([...jwtServeArgs(as, dir)]);
  procs.push(p);
  return p;
}

const echo = (url: string, token?: string) =>
  fetch(url, {
    method: 'POST',
    headers: {
      ...mcpHeaders('tools/call', 'echo'),
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'hi' }, _meta: envelope() },
    }),
  });

const form = (fields: Record<string, string>) => ({ method: 'POST', body: new URLSearchParams(fields) });

describe('the test authorization server', () => {
  it('signs in for serve in JWT mode: challenge, metadata, accepted token, refused once expired, rotated refresh', async () => {
    const as = await authorizationServer({
      accessTokenLifetimeSeconds: 3,
      verifierLeewaySeconds: SERVE_LEEWAY_SECONDS,
    });
    const p = await serveFor(as);
    const refused = await echo(p.url);
    expect(refused.status).toBe(401);
    const prmUrl = /resource_metadata="([^"]+)"/.exec(refused.headers.get('www-authenticate') ?? '')?.[1];
    expect(prmUrl).toBe(`${p.origin}/.well-known/oauth-protected-resource/mcp`);
    const prm = (await (await fetch(prmUrl as string)).json()) as {
      resource: string;
      authorization_servers: string[];
    };
    expect(prm).toMatchObject({ resource: p.url, authorization_servers: [as.issuer] });
    expect(await (await fetch(as.url)).json()).toMatchObject({
      issuer: as.issuer,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      registration_endpoint: `${as.issuer}/register`,
      revocation_endpoint: `${as.issuer}/revoke`,
      device_authorization_endpoint: `${as.issuer}/device_authorization`,
    });

    const tokens = await signInDirectly(as.issuer, prm.resource);
    const signedInAt = Date.now();
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3, scope: 'mcp' });
    const accepted = await echo(p.url, tokens.access_token);
    expect(accepted.status).toBe(200);
    expect(JSON.stringify(await accepted.json())).toContain('hi');
    // A token for another resource is not this server's.
    const elsewhere = await as.issueAccessToken({ resource: 'http://127.0.0.1:9/mcp' });
    expect((await echo(p.url, elsewhere)).status).toBe(401);

    await new Promise((r) => setTimeout(r, Math.max(0, signedInAt + 4_500 - Date.now())));
    const expired = await echo(p.url, tokens.access_token);
    expect(expired.status).toBe(401);
    expect(expired.headers.get('www-authenticate')).toContain('error="invalid_token"');

    const refreshed = await refreshDirectly(as.issuer, tokens.clientId, tokens.refresh_token as string);
    expect(refreshed.status).toBe(200);
    expect((await echo(p.url, refreshed.body.access_token as string)).status).toBe(200);
    // Rotation: the spent refresh token is refused.
    const again = await refreshDirectly(as.issuer, tokens.clientId, tokens.refresh_token as string);
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    expect(as.requests.filter((r) => r.path === '/token').map((r) => [r.grant_type, r.status])).toEqual([
      ['authorization_code', 200],
      ['refresh_token', 200],
      ['refresh_token', 400],
    ]);
    const recorded = JSON.stringify(as.requests);
    for (const t of as.issued) expect(recorded).not.toContain(t.value);
  });

  it('refuses an authorization without PKCE, a wrong verifier, and a loopback redirect on another path', async () => {
    const as = await authorizationServer();
    const registered = (await (
      await fetch(`${as.issuer}/register`, {
        method: 'POST',
        body: JSON.stringify({
          redirect_uris: ['http://127.0.0.1:1/callback'],
          token_endpoint_auth_method: 'none',
        }),
      })
    ).json()) as { client_id: string };
    const authorize = (params: Record<string, string>) =>
      fetch(
        `${as.issuer}/authorize?${new URLSearchParams({ response_type: 'code', client_id: registered.client_id, state: 's1', resource: 'http://127.0.0.1:2/mcp', ...params })}`,
        { redirect: 'manual' },
      );
    const noPkce = await authorize({ redirect_uri: 'http://127.0.0.1:5555/callback' });
    expect(noPkce.status).toBe(302);
    const back = new URL(noPkce.headers.get('location') as string);
    expect([back.port, back.searchParams.get('error'), back.searchParams.get('state')]).toEqual([
      '5555',
      'invalid_request',
      's1',
    ]);
    const challenge = {
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    };
    expect((await authorize({ redirect_uri: 'http://127.0.0.1:5555/other', ...challenge })).status).toBe(400);
    const ok = await authorize({ redirect_uri: 'http://127.0.0.1:5555/callback', ...challenge });
    const code = new URL(ok.headers.get('location') as string).searchParams.get('code') as string;
    const token = await fetch(
      `${as.issuer}/token`,
      form({
        grant_type: 'authorization_code',
        code,
        redirect_uri: 'http://127.0.0.1:5555/callback',
        code_verifier: 'x'.repeat(43),
        client_id: registered.client_id,
      }),
    );
    expect(token.status).toBe(400);
    expect(await token.json()).toEqual({ error: 'invalid_grant' });
  });

  it('client credentials (RS256), the device grant with its approval, and revocation of a refresh token', async () => {
    const as = await authorizationServer({
      algorithm: 'RS256',
      preRegisteredClients: [{ clientId: 'machine', clientSecret: 'machine-secret-123' }, { clientId: 'tv' }],
    });
    const basic = `Basic ${Buffer.from('machine:machine-secret-123').toString('base64')}`;
    const cc = await fetch(`${as.issuer}/token`, {
      ...form({ grant_type: 'client_credentials', resource: 'http://127.0.0.1:2/mcp' }),
      headers: { authorization: basic },
    });
    expect(cc.status).toBe(200);
    const machine = (await cc.json()) as Record<string, string>;
    expect(machine).not.toHaveProperty('refresh_token');
    const { payload, protectedHeader } = await jwtVerify(
      machine.access_token as string,
      createLocalJWKSet(as.jwks),
      { issuer: as.issuer, audience: 'http://127.0.0.1:2/mcp' },
    );
    expect(protectedHeader.alg).toBe('RS256');
    expect(payload).toMatchObject({ sub: 'machine', scope: 'mcp' });
    const wrongSecret = await fetch(`${as.issuer}/token`, {
      ...form({ grant_type: 'client_credentials' }),
      headers: { authorization: `Basic ${Buffer.from('machine:nope').toString('base64')}` },
    });
    expect(wrongSecret.status).toBe(401);

    const device = (await (
      await fetch(`${as.issuer}/device_authorization`, form({ client_id: 'tv' }))
    ).json()) as Record<string, string>;
    const poll = () =>
      fetch(
        `${as.issuer}/token`,
        form({
          grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
          device_code: device.device_code as string,
          client_id: 'tv',
        }),
      );
    expect(await (await poll()).json()).toEqual({ error: 'authorization_pending' });
    expect((await fetch(device.verification_uri_complete as string)).status).toBe(200);
    const tokens = (await (await poll()).json()) as Record<string, string>;
    expect(tokens.token_type).toBe('Bearer');

    expect(
      (await fetch(`${as.issuer}/revoke`, form({ token: tokens.refresh_token as string, client_id: 'tv' })))
        .status,
    ).toBe(200);
    expect(as.revoked.has(tokens.refresh_token as string)).toBe(true);
    const refreshed = await refreshDirectly(as.issuer, 'tv', tokens.refresh_token as string);
    expect(refreshed).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });
});
