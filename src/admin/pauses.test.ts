// Pauses through the operator API in process, over a real SQLite store: pause and resume within the operator's
// tenants (CSRF token, audit lines), input refused with 400, the list and the flow view scoped to the operator.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sqliteFiles } from '../../test/support/sqlite-files.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { AuditEvent } from '../protocol/audit.js';
import { newTask } from '../stores/task-store.contract.js';
import { PAUSED_MESSAGE } from '../tasks/pauses.js';
import type { TaskStore } from '../tasks/store.js';
import { createAdminRoute } from './api.js';

const { freshPath, open } = sqliteFiles('durable-mcp-admin-pauses-');
const T0 = 1_700_000_000_000;

/** `root` operates every tenant, `acme-ops` tenant acme, `user` is no operator. */
const authenticator: Authenticator = {
  mode: 'test',
  authenticate: (header) => {
    const token = header('authorization')?.replace(/^Bearer /, '');
    if (token === 'root')
      return { ok: true, auth: { tenant: 'ops', principal: 'root' }, operator: { tenants: 'all' } };
    if (token === 'acme-ops')
      return { ok: true, auth: { tenant: 'acme', principal: 'ops' }, operator: { tenants: ['acme'] } };
    if (token === 'user') return { ok: true, auth: { tenant: 'acme', principal: 'alice' } };
    return { ok: false, status: 401, challenge: 'Bearer', message: 'Unauthorized' };
  },
};

type Who = 'root' | 'acme-ops' | 'user';
type Json = Record<string, unknown> & { error?: { code: string }; items?: unknown[] };

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((done) => server.close(done));
});

async function serve(store: TaskStore) {
  const audit: AuditEvent[] = [];
  const route = createAdminRoute({
    store: store.admin ?? (undefined as never),
    secret: 's'.repeat(32),
    authenticator,
    audit: (e) => audit.push(e),
    now: () => T0 + 10_000,
  });
  const server = createServer((req, res) => {
    if (!route(req, res)) res.writeHead(404).end();
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/admin/api/v1`;
  const call = async (method: string, path: string, who: Who, body?: string, csrf?: string) => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${who}`, ...(csrf === undefined ? {} : { 'x-csrf-token': csrf }) },
      body,
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  /** A change with the operator's CSRF token. */
  const change = async (method: 'POST' | 'DELETE', path: string, who: Who, body?: unknown) => {
    const session = await call('GET', '/session', who);
    const text = typeof body === 'string' ? body : body === undefined ? undefined : JSON.stringify(body);
    return call(method, path, who, text, String(session.body.csrfToken));
  };
  return { call, change, audit };
}

describe('pauses in the operator API', () => {
  it('pauses a tool, shows the paused task and the pause, and resumes it: audited, with the CSRF token', async () => {
    const store = open(freshPath());
    const api = await serve(store);
    expect((await api.call('POST', '/pauses', 'root', '{"kind":"tool","name":"slow"}')).body).toMatchObject({
      error: { code: 'csrf' },
    });
    expect((await api.change('POST', '/pauses', 'user', { kind: 'tool', name: 'slow' })).status).toBe(403);
    expect(await api.change('POST', '/pauses', 'root', { kind: 'tool', name: 'slow' })).toEqual({
      status: 201,
      body: { ok: true, created: true },
    });
    expect((await api.change('POST', '/pauses', 'root', { kind: 'tool', name: 'slow' })).status).toBe(200);

    const task = newTask({ createdAt: T0, tool: 'slow' });
    await store.create(task);
    expect(await store.claim('w', 1_000, T0 + 1)).toBeUndefined();
    expect(await store.get(task.id, task.owner, T0 + 1)).toMatchObject({ statusMessage: PAUSED_MESSAGE });
    const pause = {
      kind: 'tool',
      name: 'slow',
      pausedAt: new Date(T0 + 10_000).toISOString(),
      pausedTasks: 1,
    };
    expect((await api.call('GET', '/pauses', 'root')).body).toEqual({ items: [pause] });
    expect((await api.call('GET', '/flow', 'root')).body).toEqual({ keys: [], pauses: [pause] });

    expect(await api.change('DELETE', '/pauses?kind=tool&name=slow', 'root')).toEqual({
      status: 200,
      body: { ok: true, resumed: 1 },
    });
    expect((await api.change('DELETE', '/pauses?kind=tool&name=slow', 'root')).status).toBe(404);
    expect((await store.claim('w', 1_000, T0 + 2))?.id).toBe(task.id);
    expect(api.audit.filter((e) => e.event !== 'admin.denied')).toEqual([
      {
        event: 'admin.pause',
        tenant: 'ops',
        principal: 'root',
        pause: { kind: 'tool', name: 'slow' },
        outcome: 'ok',
      },
      {
        event: 'admin.pause',
        tenant: 'ops',
        principal: 'root',
        pause: { kind: 'tool', name: 'slow' },
        outcome: 'ok',
      },
      expect.objectContaining({ event: 'admin.resume', resumed: 1, outcome: 'ok' }),
      expect.objectContaining({ event: 'admin.resume', outcome: 'not_found' }),
    ]);
  });

  it('keeps an operator of some tenants to theirs: pauses for them only, and sees only theirs', async () => {
    const store = open(freshPath());
    const api = await serve(store);
    expect((await api.change('POST', '/pauses', 'acme-ops', { kind: 'tool', name: 'slow' })).status).toBe(
      403,
    );
    const globex = { kind: 'key', name: 'payments', tenant: 'globex' };
    expect((await api.change('POST', '/pauses', 'acme-ops', globex)).status).toBe(403);
    expect((await api.change('POST', '/pauses', 'root', globex)).status).toBe(201);
    expect((await api.change('POST', '/pauses', 'acme-ops', { ...globex, tenant: 'acme' })).status).toBe(201);
    expect((await api.call('GET', '/pauses', 'acme-ops')).body.items).toEqual([
      expect.objectContaining({ kind: 'key', name: 'payments', tenant: 'acme' }),
    ]);
    expect((await api.call('GET', '/pauses', 'root')).body.items).toHaveLength(2);
    expect(
      (await api.change('DELETE', '/pauses?kind=key&name=payments&tenant=globex', 'acme-ops')).status,
    ).toBe(404);
    expect(api.audit.filter((e) => e.event === 'admin.pause').map((e) => e.outcome)).toEqual([
      'forbidden',
      'forbidden',
      'ok',
      'ok',
    ]);
  });

  it('refuses with 400 what does not name a pause: unknown kinds and fields, empty, long or unprintable names', async () => {
    const store = open(freshPath());
    const api = await serve(store);
    for (const body of [
      'not json',
      '[]',
      { kind: 'queue', name: 'x' },
      { kind: 'tool' },
      { kind: 'tool', name: '' },
      { kind: 'tool', name: 'x'.repeat(201) },
      { kind: 'tool', name: 'a\u0007b' },
      { kind: 'tool', name: 'a', tenant: 7 },
      { kind: 'tool', name: 'a', colour: 'blue' },
    ])
      expect((await api.change('POST', '/pauses', 'root', body)).status, JSON.stringify(body)).toBe(400);
    expect((await api.change('POST', '/pauses', 'root', 'x'.repeat(5_000))).status).toBe(413);
    for (const query of ['', 'kind=tool', 'kind=tool&name=a&name=b', 'kind=tool&name=a&x=1'])
      expect((await api.change('DELETE', `/pauses?${query}`, 'root')).status, query).toBe(400);
    for (const max of ['0', '501', 'ten', '-1'])
      expect((await api.call('GET', `/flow?max=${max}`, 'root')).status, max).toBe(400);
    expect((await api.call('GET', '/pauses', 'root')).body).toEqual({ items: [] });
  });

  it('shows the keys at their limit with their slots held and parked tasks, within the operator’s tenants', async () => {
    const store = open(freshPath());
    const api = await serve(store);
    const limit = { key: 'deploy', limit: 1 };
    for (let i = 0; i < 3; i++) await store.create(newTask({ createdAt: T0 + i, concurrency: limit }));
    expect(await store.claim('w', 60_000, T0 + 5)).toBeDefined();
    expect(await store.claim('w', 60_000, T0 + 5)).toBeUndefined();
    expect((await api.call('GET', '/flow', 'root')).body.keys).toEqual([
      { key: 'deploy', limit: 1, slotsHeld: 1, parked: 2 },
    ]);
    expect((await api.call('GET', '/flow', 'acme-ops')).body.keys).toHaveLength(1);
    expect((await api.call('GET', '/flow?max=1', 'root')).body.limited).toBeUndefined();
  });
});
