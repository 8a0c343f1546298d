// The operator API's delivery of an event to a task (`POST /admin/api/v1/tasks/{id}/events/{name}`), over a real SQLite
// store: within the operator's tenants only (elsewhere 404), with the CSRF token, audited; without an events port, 404.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sqliteFiles } from '../../test/support/sqlite-files.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { AuditEvent } from '../protocol/audit.js';
import { newTask } from '../stores/task-store.contract.js';
import type { TaskStore } from '../tasks/store.js';
import { createAdminRoute } from './api.js';

const { freshPath, open } = sqliteFiles('durable-mcp-admin-event-');
const T0 = 1_700_000_000_000;

const authenticator: Authenticator = {
  mode: 'test',
  authenticate: (header) => {
    const token = header('authorization')?.replace(/^Bearer /, '');
    if (token === 'globex-ops')
      return { ok: true, auth: { tenant: 'globex', principal: 'ops' }, operator: { tenants: ['globex'] } };
    if (token === 'acme-ops')
      return { ok: true, auth: { tenant: 'acme', principal: 'ops' }, operator: { tenants: ['acme'] } };
    return { ok: false, status: 401, challenge: 'Bearer', message: 'Unauthorized' };
  },
};

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((done) => server.close(done));
});

async function serve(store: TaskStore, withEvents = true) {
  const audit: AuditEvent[] = [];
  const route = createAdminRoute({
    store: store.admin as NonNullable<TaskStore['admin']>,
    events: withEvents ? store.events : undefined,
    secret: 's'.repeat(32),
    authenticator,
    audit: (e) => audit.push(e),
    now: () => T0 + 10,
  });
  const server = createServer((req, res) => {
    if (!route(req, res)) res.writeHead(404).end();
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/admin/api/v1`;
  const csrf = async (token: string): Promise<string> => {
    const res = await fetch(`${base}/session`, { headers: { authorization: `Bearer ${token}` } });
    return ((await res.json()) as { csrfToken: string }).csrfToken;
  };
  const send = async (path: string, body: string, token = 'acme-ops', withCsrf = true) => {
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
    };
    if (withCsrf) headers['x-csrf-token'] = await csrf(token);
    const res = await fetch(`${base}${path}`, { method: 'POST', headers, body });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  return { send, audit };
}

describe('the operator API: events', () => {
  it('delivers to a task within the operator’s tenants, with the CSRF token, and audits it', async () => {
    const store = open(freshPath());
    const task = await store.create(
      newTask({ createdAt: T0, owner: { tenant: 'acme', principal: 'alice' } }),
    );
    const { send, audit } = await serve(store);
    const path = `/tasks/${task.id}/events/approved`;
    expect((await send(path, '{"ok":true}', 'acme-ops', false)).status).toBe(403);
    expect((await send(path, '{"ok":true}', 'globex-ops')).status).toBe(404);
    expect(await send(path, '{"ok":true}')).toEqual({ status: 202, body: { ok: true, outcome: 'kept' } });
    expect(await send(path, '{"ok":true}')).toEqual({ status: 202, body: { ok: true, outcome: 'repeat' } });
    expect((await send(path, '{"ok":false}')).status).toBe(409);
    expect((await send(`/tasks/${task.id}/events/no%20spaces`, '1')).status).toBe(400);
    expect(audit.filter((e) => e.event === 'admin.event').map((e) => e.outcome)).toEqual([
      'not_found',
      'kept',
      'repeat',
      'conflict',
    ]);
  });

  it('is 404 without an events port', async () => {
    const store = open(freshPath());
    const task = await store.create(
      newTask({ createdAt: T0, owner: { tenant: 'acme', principal: 'alice' } }),
    );
    const { send } = await serve(store, false);
    expect((await send(`/tasks/${task.id}/events/x`, '1')).status).toBe(404);
  });
});
