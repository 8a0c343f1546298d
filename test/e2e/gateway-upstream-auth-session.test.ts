// A 2025-11-25 upstream (an SDK v1 server over Streamable HTTP, on 127.0.0.1) that takes only the access token its
// authorization server issued last, behind the gateway's session upstream signed in with a ClientAuth: every request
// carries the sign-in's token, a 401 for an expired one gets a new token and the request sent once more (the call
// reaching the upstream once), a call that outlives its token completes, and a sign-in nobody can make fails at once
// with what to run. Last, the same with the real machinery: client credentials from the test authorization server,
// whose JWTs the upstream checks.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createOAuth } from '../../src/client/oauth/index.js';
import { SignInRequiredError, type ClientAuth } from '../../src/client/oauth/types.js';
import { createSessionUpstream } from '../../src/gateway/session-upstream.js';
import { UpstreamNotSentError, type Upstream } from '../../src/gateway/upstream.js';
import { startAuthorizationServer, type AuthorizationServer } from '../support/oauth-authorization-server.js';

/** The upstream's tool: answers after `ms`, counting how often it ran. */
function build(ran: string[]): McpServer {
  const server = new McpServer({ name: 'guarded-v1', version: '1.0.0' });
  server.registerTool(
    'slow_echo',
    { inputSchema: { text: z.string(), ms: z.number().int().min(0).max(10_000) } },
    async ({ text, ms }) => {
      ran.push(text);
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { content: [{ type: 'text', text }] };
    },
  );
  return server;
}

/** Whether a request's Authorization header is taken. */
type Accepts = (authorization: string | undefined, url: URL) => Promise<boolean>;

/**
 * The upstream, taking only what `accepts` takes; with `issuer`, its RFC 9728 metadata names that authorization
 * server and its 401 challenge points there, as an OAuth-protected MCP server's do.
 */
async function guardedUpstream(accepts: Accepts, issuer?: string) {
  const ran: string[] = [];
  const seen: (string | undefined)[] = [];
  const transports = new Map<string, StreamableHTTPServerTransport>();
  let url = new URL('http://127.0.0.1/mcp');
  const metadataUrl = (): string => `${url.origin}/.well-known/oauth-protected-resource${url.pathname}`;
  const http: Server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      if (issuer !== undefined && req.url === new URL(metadataUrl()).pathname) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ resource: url.href, authorization_servers: [issuer] }));
        return;
      }
      seen.push(req.headers.authorization);
      if (!(await accepts(req.headers.authorization, url))) {
        const pointer = issuer === undefined ? '' : `, resource_metadata="${metadataUrl()}"`;
        res.writeHead(401, { 'www-authenticate': `Bearer error="invalid_token"${pointer}` }).end();
        return;
      }
      const text = Buffer.concat(chunks).toString('utf8');
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
      if (transport === undefined) {
        const made: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            transports.set(id, made);
          },
        });
        transport = made;
        await build(ran).connect(made);
      }
      await transport.handleRequest(req, res, text === '' ? undefined : JSON.parse(text));
    })();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
  return {
    url,
    ran,
    seen,
    close: async () => {
      await Promise.all([...transports.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

/** The upstream and a stand-in authorization server in one: `issue()` makes a new token the only one taken. */
async function guardedByIssue() {
  let valid = '';
  let issued = 0;
  const upstream = await guardedUpstream(async (authorization) => authorization === `Bearer ${valid}`);
  return { ...upstream, issue: (): string => (valid = `tok-${++issued}`), issued: () => issued };
}

type Guarded = Awaited<ReturnType<typeof guardedByIssue>>;

/** A sign-in that keeps the last token it was issued and asks for a new one on a challenge. */
function signIn(upstream: Guarded) {
  let token: string | undefined;
  const challenges: number[] = [];
  const auth: ClientAuth = {
    token: async () => (token ??= upstream.issue()),
    challenge: async (res) => {
      challenges.push(res.status);
      token = upstream.issue();
      return true;
    },
  };
  return { auth, challenges };
}

let guarded: { close(): Promise<void> } | undefined;
let as: AuthorizationServer | undefined;
let upstream: Upstream | undefined;

afterEach(async () => {
  await upstream?.close();
  await guarded?.close();
  await as?.close();
  guarded = upstream = as = undefined;
});

const textOf = (answer: unknown): string | undefined =>
  (answer as { content?: { text?: string }[] }).content?.[0]?.text;

describe('a 2025-11-25 upstream signed in to with a ClientAuth', () => {
  it("sends the sign-in's token, gets a new one when it expired, and sends each call once", async () => {
    const guarding = await guardedByIssue();
    guarded = guarding;
    const { auth, challenges } = signIn(guarding);
    upstream = createSessionUpstream({ kind: 'http', url: guarding.url, auth });
    expect((await upstream.listTools()).map((t) => t.name)).toEqual(['slow_echo']);
    expect(challenges).toEqual([]);
    // The token expires during a call: the call, authorized when it was sent, completes.
    const long = upstream.callTool('slow_echo', { text: 'long', ms: 1_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    guarding.issue();
    expect(textOf(await long)).toBe('long');
    // The next call is refused with the old token once, then sent with a new one.
    expect(textOf(await upstream.callTool('slow_echo', { text: 'next', ms: 0 }))).toBe('next');
    expect(challenges).toContain(401);
    expect(guarding.ran).toEqual(['long', 'next']);
    expect(guarding.seen.every((a) => a === undefined || /^Bearer tok-\d+$/.test(a))).toBe(true);
    expect(guarding.seen).toContain(`Bearer tok-${guarding.issued()}`);
  });

  it('fails at once, saying what to run, when a sign-in is needed and nobody can make it', async () => {
    const guarding = await guardedUpstream(async () => false);
    guarded = guarding;
    const auth: ClientAuth = {
      token: async () => undefined,
      challenge: async () => {
        throw new SignInRequiredError(guarding.url.href);
      },
    };
    upstream = createSessionUpstream({ kind: 'http', url: guarding.url, auth }, { connectTimeoutMs: 20_000 });
    const started = Date.now();
    const failed = await upstream.listTools().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).toBeInstanceOf(UpstreamNotSentError);
    expect((failed as Error).message).toContain(`durable-mcp login --url ${guarding.url.href}`);
    expect((failed as Error).cause).toBeInstanceOf(SignInRequiredError);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(guarding.ran).toEqual([]);
  });

  it('with client credentials from the test authorization server, outlives its 2-second tokens', async () => {
    const server = await startAuthorizationServer({
      accessTokenLifetimeSeconds: 2,
      preRegisteredClients: [{ clientId: 'gw', clientSecret: 'gw-secret-0123456789' }],
    });
    as = server;
    const keys = createLocalJWKSet(server.jwks);
    const accepts: Accepts = async (authorization, url) => {
      const token = /^Bearer (\S+)$/.exec(authorization ?? '')?.[1];
      if (token === undefined) return false;
      return jwtVerify(token, keys, { issuer: server.issuer, audience: url.href }).then(
        () => true,
        () => false,
      );
    };
    const guarding = await guardedUpstream(accepts, server.issuer);
    guarded = guarding;
    const auth = createOAuth({
      serverUrl: guarding.url.href,
      client: { clientId: 'gw', clientSecret: 'gw-secret-0123456789' },
      clientCredentials: true,
    });
    upstream = createSessionUpstream({ kind: 'http', url: guarding.url, auth });
    expect((await upstream.listTools()).map((t) => t.name)).toEqual(['slow_echo']);
    expect(textOf(await upstream.callTool('slow_echo', { text: 'long', ms: 2_500 }))).toBe('long');
    expect(textOf(await upstream.callTool('slow_echo', { text: 'next', ms: 0 }))).toBe('next');
    expect(guarding.ran).toEqual(['long', 'next']);
    const granted = server.requests.filter((r) => r.grant_type === 'client_credentials' && r.status === 200);
    expect(granted.length).toBeGreaterThanOrEqual(2);
    expect(granted.every((r) => r.resource === guarding.url.href)).toBe(true);
  });
});
