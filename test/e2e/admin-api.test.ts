// The operator API of `serve` on SQLite, and its absence when no credential can be an operator.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminServer, type AdminServer } from '../support/admin-api.js';
import { startServe } from '../support/cli.js';
import { defineAdminApiSuite } from '../support/admin-api-suite.js';

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
