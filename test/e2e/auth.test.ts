// Authentication and ownership: two tenants, static tokens and JWTs; foreign tasks look exactly like missing ones.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import conformance from '../../examples/conformance/index.js';
import { createJwtAuthenticator } from '../../src/auth/jwt.js';
import { createStaticTokenAuthenticator } from '../../src/auth/static-tokens.js';
import type { AuditEvent } from '../../src/protocol/audit.js';
import {
  createDurableMcp,
  createHttpHandler,
  defineTool,
  listenHttp,
  LOOPBACK_HOSTS,
  textResult,
  type Authenticator,
  type DurableMcp,
} from '../../src/index.js';
import { createSqliteTaskStore } from '../../src/advanced.js';

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} }, elicitation: {} };
const shortLived = defineTool({
  name: 'short_lived',
  description: 'A task with a 300 ms TTL that waits for input',
  task: { support: 'required', ttlMs: 300 },
  handler: (_a, ctx) =>
    textResult(
      String(
        ctx.input('k', {
          method: 'elicitation/create',
          params: { message: 'm', requestedSchema: { type: 'object', properties: {} } },
        }).action,
      ),
    ),
});

interface Harness {
  url: string;
  base: string;
  audit: AuditEvent[];
  close(): Promise<void>;
}

const dirs: string[] = [];
async function harness(authenticator: Authenticator, metadata?: Record<string, unknown>): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-auth-'));
  dirs.push(dir);
  const audit: AuditEvent[] = [];
  const runtime: DurableMcp = createDurableMcp({
    toolSets: [conformance, { tools: [shortLived] }],
    store: createSqliteTaskStore({ path: join(dir, 'tasks.db') }),
    tasks: { audit: (e) => audit.push(e), tasksGetRate: false },
    worker: { pollMs: 50 },
  });
  const handler = createHttpHandler({
    server: runtime.server,
    authenticator,
    origin: { allowedHosts: LOOPBACK_HOSTS },
    audit: (e) => audit.push(e),
    protectedResourceMetadata: metadata,
  });
  const running = await listenHttp(handler, '127.0.0.1', 0);
  return {
    url: running.url,
    base: new URL(running.url).origin,
    audit,
    async close() {
      await running.close(200);
      await runtime.close(500);
    },
  };
}

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

let nextId = 1;
async function rpc(h: Harness, token: string | undefined, method: string, params: Record<string, unknown>) {
  const name = method === 'tools/call' ? params.name : params.taskId;
  const res = await fetch(h.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: nextId++,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': TASKS,
        },
      },
    }),
  });
  const body = (await res.json()) as {
    result?: Record<string, unknown>;
    error?: { code: number; message: string };
  };
  return { status: res.status, body, headers: res.headers };
}

/** What a caller learns from a failed task lookup: everything but the request id. */
const visible = (r: Awaited<ReturnType<typeof rpc>>) => ({ status: r.status, error: r.body.error });

async function crossOwnerChecks(h: Harness, alice: string, bob: string, carol: string): Promise<void> {
  const created = await rpc(h, alice, 'tools/call', { name: 'confirm_delete', arguments: { filename: 'x' } });
  const taskId = String(created.body.result?.taskId);
  const ghost = `task_${'Q'.repeat(32)}`;
  for (const [method, extra] of [
    ['tasks/get', {}],
    [
      'tasks/update',
      { inputResponses: { confirm_delete: { action: 'accept', content: { confirm: true } } } },
    ],
    ['tasks/cancel', {}],
  ] as const) {
    const missing = visible(await rpc(h, bob, method, { taskId: ghost, ...extra }));
    expect(missing.error).toMatchObject({ code: -32602, message: 'Task not found' });
    for (const intruder of [bob, carol]) {
      expect(visible(await rpc(h, intruder, method, { taskId, ...extra }))).toEqual(missing);
    }
  }
  // listen: a foreign id is left out of the acknowledgement exactly like a missing one.
  for (const intruder of [bob, carol]) {
    const acks = [];
    for (const ids of [[taskId], [ghost]]) {
      const res = await fetch(h.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'subscriptions/listen',
          authorization: `Bearer ${intruder}`,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 'l',
          method: 'subscriptions/listen',
          params: {
            notifications: { taskIds: ids },
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': TASKS,
            },
          },
        }),
      });
      const reader = res.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      await reader.cancel();
      acks.push({ status: res.status, first });
    }
    expect(acks[0]).toEqual(acks[1]);
    expect(acks[0]?.first).toContain('"taskIds":[]');
  }
  // The owner's task is untouched by all of that.
  const own = await rpc(h, alice, 'tasks/get', { taskId });
  expect(own.body.result?.status).not.toBe('cancelled');

  // Expired: the owner is told so; others still see "not found".
  const short = await rpc(h, alice, 'tools/call', { name: 'short_lived', arguments: {} });
  const shortId = String(short.body.result?.taskId);
  await new Promise((r) => setTimeout(r, 400));
  expect((await rpc(h, alice, 'tasks/get', { taskId: shortId })).body.error).toMatchObject({
    code: -32602,
    message: 'Task has expired',
  });
  expect(visible(await rpc(h, bob, 'tasks/get', { taskId: shortId }))).toEqual(
    visible(await rpc(h, bob, 'tasks/get', { taskId: ghost })),
  );
  expect((await rpc(h, alice, 'tasks/get', { taskId: 'task_short' })).body.error).toMatchObject({
    code: -32602,
    message: 'invalid task id',
  });
  expect(h.audit.some((e) => e.event === 'task.denied' && e.taskId === taskId && e.principal === 'bob')).toBe(
    true,
  );
  expect(h.audit.some((e) => e.event === 'task.created' && e.taskId === taskId && e.tenant === 'acme')).toBe(
    true,
  );
}

describe('static bearer tokens', () => {
  let h: Harness;
  let file: string;
  const tokens = {
    alice: 'alice-secret-token-0001',
    bob: 'bob-secret-token-000002',
    carol: 'carol-secret-token-00003',
  };
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-tokens-'));
    dirs.push(dir);
    file = join(dir, 'tokens.json');
    writeFileSync(
      file,
      JSON.stringify({
        tokens: [
          { token: tokens.alice, tenant: 'acme', principal: 'alice' },
          // Operators, of alice's tenant and of every tenant: the role widens nothing on the MCP endpoint.
          { token: tokens.bob, tenant: 'acme', principal: 'bob', roles: ['operator'] },
          {
            token: tokens.carol,
            tenant: 'globex',
            principal: 'alice',
            roles: ['operator'],
            operatorTenants: '*',
          },
        ],
      }),
    );
    h = await harness(createStaticTokenAuthenticator(file));
  });
  afterAll(() => h.close());

  it('answers 401 with a Bearer challenge without or with a wrong token, and audits it', async () => {
    for (const token of [undefined, 'not-a-known-token-at-all']) {
      const r = await rpc(h, token, 'tools/list', {});
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(r.body.error?.code).toBe(-32600);
    }
    expect(h.audit.filter((e) => e.event === 'auth.denied').length).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(h.audit)).not.toContain('not-a-known-token');
  });

  it('denies every cross-owner access exactly like a missing task (other principal, same name in another tenant, operators included)', async () => {
    await crossOwnerChecks(h, tokens.alice, tokens.bob, tokens.carol);
  });

  it('refuses malformed token files', () => {
    const bad = join(dirs[0] as string, 'bad.json');
    for (const text of [
      'nope',
      '{"tokens":{}}',
      '{"tokens":[{"token":"short","tenant":"t","principal":"p"}]}',
    ]) {
      writeFileSync(bad, text);
      expect(() => createStaticTokenAuthenticator(bad)).toThrow();
    }
  });

  it('reload() picks up a new file and keeps the old tokens when the new file is bad', async () => {
    const auth = createStaticTokenAuthenticator(file);
    const original = readFileSync(file, 'utf8');
    writeFileSync(
      file,
      JSON.stringify({ tokens: [{ token: 'dave-secret-token-000004', tenant: 'acme', principal: 'dave' }] }),
    );
    expect(auth.reload()).toBeUndefined();
    const header = (t: string) => (n: string) => (n === 'authorization' ? `Bearer ${t}` : undefined);
    expect(await auth.authenticate(header('dave-secret-token-000004'))).toMatchObject({
      ok: true,
      auth: { principal: 'dave' },
    });
    expect((await auth.authenticate(header(tokens.alice))).ok).toBe(false);
    writeFileSync(file, '{broken');
    expect(auth.reload()).toMatch(/not valid JSON/);
    expect((await auth.authenticate(header('dave-secret-token-000004'))).ok).toBe(true);
    writeFileSync(file, original);
  });
});

describe('JWT access tokens', () => {
  let h: Harness;
  let sign: (
    claims: Record<string, unknown>,
    opts?: { exp?: string | number; iss?: string; aud?: string },
  ) => Promise<string>;
  const issuer = 'https://auth.example.test';
  let audience: string;
  let otherKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    otherKey = (await generateKeyPair('ES256')).privateKey;
    const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-jwks-'));
    dirs.push(dir);
    const jwksFile = join(dir, 'jwks.json');
    writeFileSync(
      jwksFile,
      JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] }),
    );
    audience = 'http://127.0.0.1/mcp';
    const metadataUrl = 'http://127.0.0.1/.well-known/oauth-protected-resource/mcp';
    const authenticator = createJwtAuthenticator({
      issuer,
      audience,
      jwks: jwksFile,
      resourceMetadataUrl: metadataUrl,
    });
    h = await harness(authenticator, {
      resource: audience,
      authorization_servers: [issuer],
      bearer_methods_supported: ['header'],
    });
    sign = (claims, opts = {}) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setIssuer(opts.iss ?? issuer)
        .setAudience(opts.aud ?? audience)
        .setIssuedAt()
        .setExpirationTime(opts.exp ?? '5m')
        .sign(privateKey);
  });
  afterAll(() => h.close());

  it('accepts a valid token and scopes tasks by tenant and subject', async () => {
    const alice = await sign({ sub: 'alice', tenant: 'acme' });
    const bob = await sign({ sub: 'bob', tenant: 'acme' });
    const carol = await sign({ sub: 'alice', tid: 'globex' });
    expect((await rpc(h, alice, 'tools/list', {})).status).toBe(200);
    await crossOwnerChecks(h, alice, bob, carol);
  });

  it('rejects expired, wrong-audience, wrong-issuer, foreign-key and unsigned tokens with 401', async () => {
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(
      JSON.stringify({ sub: 'alice', iss: issuer, aud: audience, exp: Math.floor(Date.now() / 1000) + 60 }),
    ).toString('base64url')}.`;
    const foreign = await new SignJWT({ sub: 'alice' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(issuer)
      .setAudience(audience)
      .setExpirationTime('5m')
      .sign(otherKey);
    const bad = [
      await sign({ sub: 'alice' }, { exp: Math.floor(Date.now() / 1000) - 120 }),
      await sign({ sub: 'alice' }, { aud: 'https://other.example/mcp' }),
      await sign({ sub: 'alice' }, { iss: 'https://evil.example' }),
      await sign({ tenant: 'acme' }),
      foreign,
      unsigned,
    ];
    const expected = [
      'token expired',
      'token rejected',
      'token rejected',
      'token has no sub claim',
      'token rejected',
      'token rejected',
    ];
    for (const [i, token] of bad.entries()) {
      const r = await rpc(h, token, 'tools/list', {});
      expect(r.status).toBe(401);
      expect(r.body.error?.message).toBe(`Invalid access token: ${expected[i]}`);
      const challenge = r.headers.get('www-authenticate') ?? '';
      expect(challenge).toContain(
        'resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"',
      );
      expect(challenge).toContain('error="invalid_token"');
    }
  });

  it('serves well-formed protected resource metadata (RFC 9728)', async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
    ]) {
      const res = await fetch(`${h.base}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json');
      const doc = (await res.json()) as Record<string, unknown>;
      expect(doc.resource).toBe(audience);
      expect(doc.authorization_servers).toEqual([issuer]);
      expect(doc.bearer_methods_supported).toEqual(['header']);
    }
  });
});
