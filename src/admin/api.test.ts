// The operator API in process, over a real SQLite store: the health it reports, the search of outcome-unknown tasks,
// and a gateway task's upstream call in its detail (from a view the server is given; layers: admin never imports
// the gateway).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sqliteFiles } from '../../test/support/sqlite-files.js';
import type { Authenticator } from '../auth/authenticator.js';
import { newTask } from '../stores/task-store.contract.js';
import type { AdminHealthComponent, AdminTaskUpstreamView } from '../tasks/admin.js';
import type { TaskStore } from '../tasks/store.js';
import { createAdminRoute, type AdminRouteOptions } from './api.js';

const { freshPath, open } = sqliteFiles('durable-mcp-admin-api-');
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

/** What the tests read of the answers. */
interface Body {
  items: { id: string; error?: unknown }[];
  error?: unknown;
  upstream?: unknown;
  traceId?: unknown;
  components?: unknown;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((done) => server.close(done));
});

async function serve(store: TaskStore, extra: Partial<AdminRouteOptions> = {}) {
  const admin = store.admin;
  if (admin === undefined) throw new Error('expected an admin port');
  const route = createAdminRoute({
    store: admin,
    secret: 's'.repeat(32),
    authenticator,
    now: () => T0 + 10_000,
    ...extra,
  });
  const server = createServer((req, res) => {
    if (!route(req, res)) res.writeHead(404).end();
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return async (path: string, token = 'root') => {
    const res = await fetch(`http://127.0.0.1:${port}/admin/api/v1${path}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return { status: res.status, body: (await res.json()) as Body };
  };
}

/** A task of `owner` run to a failure whose error data gives `outcome`, after saving `steps`. */
async function failedTask(
  store: TaskStore,
  createdAt: number,
  data: unknown,
  steps: Record<string, unknown> = {},
  owner = { tenant: 'acme', principal: 'alice' },
): Promise<string> {
  const task = await store.create(newTask({ createdAt, owner, tool: 'send_payment' }));
  const run = await store.claim('w', 1_000, createdAt);
  if (run?.id !== task.id) throw new Error('expected to claim the task');
  for (const [name, value] of Object.entries(steps))
    await store.saveStep(run.id, run.token, name, value as never, createdAt);
  const error = { code: -32603, message: 'outcome unknown: the upstream may have done this', data };
  await store.finish(run.id, run.token, { kind: 'failed', error, statusMessage: 'Failed.' }, createdAt + 1);
  return task.id;
}

describe('the operator API: health', () => {
  it('reports no components without a provider, and the provider’s to operators only', async () => {
    const store = open(freshPath());
    expect((await (await serve(store))('/health')).body).toEqual({ components: [] });
    const component: AdminHealthComponent = {
      kind: 'upstream',
      name: 'stdio:node up.mjs',
      status: 'down',
      since: T0,
      calls: 3,
      errors: 1,
      meanMs: 12,
      metrics: ['durable_mcp_upstream_up{upstream="node"}'],
    };
    const call = await serve(store, { health: () => [component] });
    expect(await call('/health')).toEqual({
      status: 200,
      body: { components: [{ ...component, since: new Date(T0).toISOString() }] },
    });
    expect((await call('/health', 'user')).status).toBe(403);
    expect((await call('/health', 'nobody')).status).toBe(401);
  });
});

describe('the operator API: outcome-unknown tasks', () => {
  it('lists them by errorOutcome within the operator’s tenants, each row with its outcome word', async () => {
    const store = open(freshPath());
    const unknown = await failedTask(store, T0 + 1, { outcome: 'unknown', tool: 'send_payment' });
    await failedTask(store, T0 + 2, { outcome: 'not_sent' });
    const elsewhere = await failedTask(
      store,
      T0 + 3,
      { outcome: 'unknown' },
      {},
      { tenant: 'globex', principal: 'x' },
    );
    const call = await serve(store);
    const all = await call('/tasks?errorOutcome=unknown');
    expect(all.status).toBe(200);
    expect(all.body.items.map((t) => t.id)).toEqual([elsewhere, unknown]);
    expect(all.body.items[1]?.error).toEqual({
      code: -32603,
      message: 'outcome unknown: the upstream may have done this',
      outcome: 'unknown',
    });
    const scoped = await call('/tasks?errorOutcome=unknown', 'acme-ops');
    expect(scoped.body.items.map((t) => t.id)).toEqual([unknown]);
    for (const bad of ['Unknown', 'a%20b', '', 'x'.repeat(40)]) {
      const refused = await call(`/tasks?errorOutcome=${bad}`);
      expect(refused.status, bad).toBe(400);
    }
  });

  it('shows a gateway task’s upstream call in its detail, derived by the view from its step values', async () => {
    const store = open(freshPath());
    const dispatched = await failedTask(
      store,
      T0 + 1,
      { outcome: 'unknown' },
      { dispatched: { run: 'r1', task: 'x' } },
    );
    const following = await failedTask(
      store,
      T0 + 2,
      { outcome: 'unknown' },
      {
        dispatched: { run: 'r1', task: 'x' },
        upstream: {
          resultType: 'task',
          taskId: 'up-7',
          status: 'working',
          statusMessage: 'kept-upstream-text',
        },
      },
    );
    const seen: string[] = [];
    const view: AdminTaskUpstreamView = async (task, step) => {
      const names = task.steps.filter((s) => s.done).map((s) => s.name);
      if (!names.includes('upstream')) return { upstream: 'up', dispatch: 'dispatched', step: 'dispatched' };
      const value = (await step('upstream')) as { taskId: string };
      seen.push(value.taskId);
      return { upstream: 'up', dispatch: 'following', step: 'upstream', upstreamTaskId: value.taskId };
    };
    const call = await serve(store, { taskUpstream: view });
    const first = await call(`/tasks/${dispatched}`);
    expect(first.body.upstream).toEqual({ upstream: 'up', dispatch: 'dispatched', step: 'dispatched' });
    expect(first.body.error).toMatchObject({ outcome: 'unknown' });
    // The detail never carries the step's value itself.
    const second = await call(`/tasks/${following}`);
    expect(second.body.upstream).toEqual({
      upstream: 'up',
      dispatch: 'following',
      step: 'upstream',
      upstreamTaskId: 'up-7',
    });
    expect(JSON.stringify(second.body)).not.toContain('kept-upstream-text');
    expect(seen).toEqual(['up-7']);
    // Without the view (a plain serve), no upstream.
    expect((await (await serve(store))(`/tasks/${following}`)).body.upstream).toBeUndefined();
  });
});

describe('the operator API: trace ids', () => {
  it("gives a task's trace id in its detail, and none for a task without a trace", async () => {
    const store = open(freshPath());
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const traced = await store.create(
      newTask({ createdAt: T0, trace: { traceParent: `00-${traceId}-00f067aa0ba902b7-01` } }),
    );
    const plain = await store.create(newTask({ createdAt: T0 }));
    const call = await serve(store);
    expect((await call(`/tasks/${traced.id}`)).body.traceId).toBe(traceId);
    expect((await call(`/tasks/${plain.id}`)).body).not.toHaveProperty('traceId');
  });
});
