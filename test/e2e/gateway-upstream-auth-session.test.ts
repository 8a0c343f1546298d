// A 2025-11-25 upstream (an SDK v1 server over Streamable HTTP, on 127.0.0.1) that takes only the access token its
// authorization server issued last, behind the gateway's session upstream signed in with a ClientAuth: every request
// carries the sign-in's token, a 401 for an expired one gets a new token and the request sent once more (the call
// reaching the upstream once), a call that outlives its token completes, and a sign-in nobody can make fails at once
// with what to run.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SignInRequiredError, type ClientAuth } from '../../src/client/oauth/types.js';
import { createSessionUpstream } from '../../src/gateway/session-upstream.js';
import { UpstreamNotSentError, type Upstream } from '../../src/gateway/upstream.js';

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

/** The upstream and its authorization server in one: `issue()` makes a new token the only one taken. */
async function guardedUpstream() {
  const ran: string[] = [];
  const seen: (string | undefined)[] = [];
  let valid = '';
  let issued = 0;
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const http: Server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      seen.push(req.headers.authorization);
      if (req.headers.authorization !== `Bearer ${valid}`) {
        res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end();
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
  const url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
  return {
    url,
    ran,
    seen,
    issue: (): string => (valid = `tok-${++issued}`),
    issued: () => issued,
    close: async () => {
      await Promise.all([...transports.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

type Guarded = Awaited<ReturnType<typeof guardedUpstream>>;

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

let guarded: Guarded | undefined;
let upstream: Upstream | undefined;

afterEach(async () => {
  await upstream?.close();
  await guarded?.close();
  guarded = upstream = undefined;
});

const textOf = (answer: unknown): string | undefined =>
  (answer as { content?: { text?: string }[] }).content?.[0]?.text;

describe('a 2025-11-25 upstream signed in to with a ClientAuth', () => {
  it("sends the sign-in's token, gets a new one when it expired, and sends each call once", async () => {
    guarded = await guardedUpstream();
    const { auth, challenges } = signIn(guarded);
    upstream = createSessionUpstream({ kind: 'http', url: guarded.url, auth });
    expect((await upstream.listTools()).map((t) => t.name)).toEqual(['slow_echo']);
    expect(challenges).toEqual([]);
    // The token expires during a call: the call, authorized when it was sent, completes.
    const long = upstream.callTool('slow_echo', { text: 'long', ms: 1_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    guarded.issue();
    expect(textOf(await long)).toBe('long');
    // The next call is refused with the old token once, then sent with a new one.
    expect(textOf(await upstream.callTool('slow_echo', { text: 'next', ms: 0 }))).toBe('next');
    expect(challenges).toContain(401);
    expect(guarded.ran).toEqual(['long', 'next']);
    expect(guarded.seen.every((a) => a === undefined || /^Bearer tok-\d+$/.test(a))).toBe(true);
    expect(guarded.seen).toContain(`Bearer tok-${guarded.issued()}`);
  });

  it('fails at once, saying what to run, when a sign-in is needed and nobody can make it', async () => {
    guarded = await guardedUpstream();
    const auth: ClientAuth = {
      token: async () => undefined,
      challenge: async () => {
        throw new SignInRequiredError(guarded?.url.href ?? '');
      },
    };
    upstream = createSessionUpstream({ kind: 'http', url: guarded.url, auth }, { connectTimeoutMs: 20_000 });
    const started = Date.now();
    const failed = await upstream.listTools().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).toBeInstanceOf(UpstreamNotSentError);
    expect((failed as Error).message).toContain(`durable-mcp login --url ${guarded.url.href}`);
    expect((failed as Error).cause).toBeInstanceOf(SignInRequiredError);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(guarded.ran).toEqual([]);
  });
});
