// The operator API of `serve` on SQLite, its absence when no credential can be an operator, and the caps of its event
// streams.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminServer, TOKENS, type AdminServer, type Who } from '../support/admin-api.js';
import { envelope, mcpHeaders, startServe } from '../support/cli.js';
import { holdRequest, oneShot, type HeldRequest } from '../support/raw-http.js';
import { defineAdminApiSuite } from '../support/admin-api-suite.js';
import { defineAdminBulkSuite } from '../support/admin-bulk-suite.js';

defineAdminApiSuite('the operator API on SQLite', (dir) => ['--store', join(dir, 'tasks.db')]);

describe('a server without operators', () => {
  let server: AdminServer;
  beforeAll(async () => {
    server = await startAdminServer((dir) => ['--store', join(dir, 'tasks.db')], false);
  }, 30_000);
  afterAll(async () => server?.close());

  it('answers every /admin path 404, as any unknown path', async () => {
    const unknown = await fetch(`${server.proc.origin}/no-such-path`);
    const body = await unknown.text();
    expect([unknown.status, JSON.parse(body)]).toEqual([
      404,
      { error: { code: 'not_found', message: 'Not found' } },
    ]);
    for (const [method, path] of [
      ['GET', '/session'],
      ['GET', '/tasks'],
      ['GET', '/overview'],
      ['GET', '/health'],
      ['GET', '/events'],
      ['POST', '/tasks/x/retry'],
      ['DELETE', '/tasks/x'],
    ] as const)
      for (const who of [undefined, 'root', 'alice'] as const) {
        const reply = await server.api(method, path, who);
        expect([reply.status, reply.body], `${method} ${path} as ${who}`).toEqual([404, JSON.parse(body)]);
      }
    // The dashboard too.
    for (const path of ['/admin', '/admin/', '/admin/ui/app.js', '/admin/ui/dashboard.css'])
      expect((await fetch(`${server.proc.origin}${path}`)).status, path).toBe(404);
  });
});

describe('anonymous development mode', () => {
  it('serves the operator API to the anonymous caller only with --dev-operator', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-admin-dev-'));
    try {
      for (const [flags, status] of [
        [['--dev-operator'], 200],
        [[], 404],
      ] as const) {
        const proc = await startServe(['--store', join(dir, 'tasks.db'), '--port', '0', ...flags]);
        try {
          const res = await fetch(`${proc.origin}/admin/api/v1/session`);
          expect(res.status).toBe(status);
          if (status === 200)
            expect(await res.json()).toMatchObject({
              tenant: 'default',
              principal: 'anonymous',
              operator: { tenants: 'all' },
            });
        } finally {
          proc.child.kill('SIGTERM');
          await proc.exited;
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('operator event streams', () => {
  let server: AdminServer;
  const held: HeldRequest[] = [];
  beforeAll(async () => {
    server = await startAdminServer((dir) => ['--store', join(dir, 'tasks.db')], true, [
      ...['--max-admin-streams', '2', '--max-admin-streams-total', '3', '--max-connections', '8'],
    ]);
  }, 30_000);
  afterAll(async () => {
    for (const h of held) h.close();
    await server?.close();
  });

  const port = (): number => Number(new URL(server.proc.origin).port);
  const events = { path: '/admin/api/v1/events', method: 'GET' };
  const as = (who: Who) => ({ authorization: `Bearer ${TOKENS[who]}` });
  const hold = async (who: Who): Promise<HeldRequest> => {
    const h = await holdRequest(port(), { ...events, headers: as(who) });
    held.push(h);
    return h;
  };
  const refusal = async (who: Who) => {
    const answer = await oneShot(port(), { ...events, headers: as(who), timeoutMs: 5_000 });
    return {
      status: answer.status,
      retryAfter: answer.headers['retry-after'],
      body: JSON.parse(answer.body),
    };
  };
  const toolsList = async (who: Who) =>
    (
      await oneShot(port(), {
        path: '/mcp',
        method: 'POST',
        headers: { ...mcpHeaders('tools/list'), ...as(who) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } }),
      })
    ).status;

  it('caps open streams per operator and in all (429), while another tenant is served', async () => {
    const first = await Promise.all([hold('opsA'), hold('opsA')]);
    expect(first.map((h) => h.status)).toEqual([200, 200]);
    expect(await refusal('opsA')).toEqual({
      status: 429,
      retryAfter: '5',
      body: {
        error: {
          code: 'too_many_requests',
          message: 'Too many open event streams for this operator (limit 2): close one first',
        },
      },
    });
    expect((await hold('root')).status).toBe(200);
    expect(await refusal('root')).toMatchObject({
      status: 429,
      body: {
        error: { code: 'too_many_requests', message: expect.stringMatching(/on this server \(limit 3\)/) },
      },
    });
    // An operator that keeps opening streams (more than --max-connections) holds no more of them.
    const flood: (number | undefined)[] = [];
    for (let i = 0; i < 10; i += 1) flood.push((await hold('opsA')).status);
    expect(flood).toEqual(Array.from({ length: 10 }, () => 429));
    expect(await toolsList('bob')).toBe(200);
    expect(await toolsList('alice')).toBe(200);
    const metrics = await (await fetch(`${server.proc.origin}/metrics`)).text();
    expect(metrics).toContain('durable_mcp_open_subscriptions{kind="operator"} 3');
    // A stream that ends makes room.
    first[0]?.close();
    let again: HeldRequest | undefined;
    for (let i = 0; i < 50 && again?.status !== 200; i += 1) {
      await new Promise((r) => setTimeout(r, 20));
      again = await hold('opsA');
    }
    expect(again?.status).toBe(200);
  });
});

defineAdminBulkSuite('bulk changes on SQLite', (dir) => ['--store', join(dir, 'tasks.db')]);
