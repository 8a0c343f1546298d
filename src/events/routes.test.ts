// The event routes over HTTP on a SQLite store: an owner delivers to its task (someone else's is 404), a callback
// URL delivers once (a repeat is the same 2xx, another payload 409), forged tokens are 404 and expired ones 410, a
// payload over the bound is 413, a schema's refusal 422, and the callback route is rate-limited per client.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Authenticator } from '../auth/authenticator.js';
import type { AuditEvent } from '../protocol/audit.js';
import { ALICE, BOB, LEASE, must, newTask, T0 } from '../stores/contract/harness.contract.js';
import { createSqliteTaskStore } from '../stores/sqlite/task-store.js';
import { createCallbackTokens } from '../tasks/callback-tokens.js';
import { MAX_EVENT_PAYLOAD_BYTES } from '../tasks/events.js';
import type { TaskStore } from '../tasks/store.js';
import { createEventRoutes } from './routes.js';

const users: Record<string, typeof ALICE> = { 'Bearer alice': ALICE, 'Bearer bob': BOB };
const authenticator: Authenticator = {
  mode: 'test',
  authenticate: (header) => {
    const who = users[header('authorization') ?? ''];
    return who === undefined
      ? { ok: false, status: 401, challenge: 'Bearer', message: 'Missing or unknown token' }
      : { ok: true, auth: who };
  },
};

let store: TaskStore;
let server: Server;
let base: string;
let now = T0;
const audit: AuditEvent[] = [];
const tokens = createCallbackTokens('a secret of the test');

beforeEach(async () => {
  store = createSqliteTaskStore({ path: ':memory:' });
  now = T0;
  audit.length = 0;
  const route = createEventRoutes({
    events: must(store.events),
    authenticator,
    tokens,
    now: () => now,
    audit: (e) => audit.push(e),
    callbackRate: { perSecond: 1, burst: 5 },
  });
  server = createServer((req, res) => {
    if (!route(req, res)) res.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.close();
  await store.close();
});

const post = async (path: string, body: string, auth?: string) => {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(auth === undefined ? {} : { authorization: auth }) },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

/** A task of Alice's, claimed, waiting for event `name`. */
async function waitingTask(name: string, schema?: Record<string, unknown>): Promise<string> {
  const task = await store.create(newTask({ createdAt: now }));
  const run = must(await store.claim('w', LEASE, now));
  await must(store.events).wait(task.id, run.token, name, { until: now + 60_000, schema }, now);
  const waiting = { kind: 'waiting', until: now + 60_000, statusMessage: 'Waiting.' } as const;
  await store.finish(task.id, run.token, waiting, now);
  return task.id;
}

describe('the event routes', () => {
  it("delivers from the task's owner; someone else's task and an unknown one are 404", async () => {
    const id = await waitingTask('go');
    expect(await post(`/tasks/${id}/events/go`, '{"a":1}')).toMatchObject({ status: 401 });
    expect(await post(`/tasks/${id}/events/go`, '{"a":1}', 'Bearer bob')).toMatchObject({ status: 404 });
    expect(await post(`/tasks/nope/events/go`, '{"a":1}', 'Bearer alice')).toMatchObject({ status: 404 });
    expect(await post(`/tasks/${id}/events/go`, '{"a":1}', 'Bearer alice')).toEqual({
      status: 202,
      body: { ok: true, outcome: 'delivered' },
    });
    // Whitespace aside, the same payload: the same 2xx, nothing changes; another payload conflicts.
    expect(await post(`/tasks/${id}/events/go`, '{ "a": 1 }', 'Bearer alice')).toMatchObject({ status: 202 });
    expect(await post(`/tasks/${id}/events/go`, '{"a":2}', 'Bearer alice')).toMatchObject({ status: 409 });
    expect(await post(`/tasks/${id}/events/bad name`, '1', 'Bearer alice')).toMatchObject({ status: 400 });
    expect(await post(`/tasks/${id}/events/go`, '{nope', 'Bearer alice')).toMatchObject({ status: 400 });
    expect(audit.filter((e) => e.event === 'task.event').map((e) => e.outcome)).toEqual([
      'not_found',
      'not_found',
      'delivered',
      'repeat',
      'conflict',
    ]);
  });

  it('delivers through a callback token once, and refuses forged and expired tokens', async () => {
    const id = await waitingTask('hook', { type: 'object', required: ['status'] });
    const token = tokens.issue(id, 'hook', now + 1_000);
    expect(await post(`/callbacks/${token}`, '{"other":1}')).toMatchObject({ status: 422 });
    expect(await post(`/callbacks/${token}`, '{"status":"paid"}')).toMatchObject({ status: 202 });
    expect(await post(`/callbacks/${token}`, '{"status":"paid"}')).toMatchObject({ status: 202 });
    expect(await post(`/callbacks/${token}`, '{"status":"refunded"}')).toMatchObject({ status: 409 });
    const forged = createCallbackTokens('another secret').issue(id, 'hook', now + 1_000);
    expect(await post(`/callbacks/${forged}`, '{"status":"paid"}')).toEqual({
      status: 404,
      body: { error: { code: 'not_found', message: 'Not found' } },
    });
    now += 1_000;
    expect(await post(`/callbacks/${token}`, '{"status":"paid"}')).toMatchObject({ status: 410 });
  });

  it('bounds the payload, and rate-limits callbacks per client address', async () => {
    const id = await waitingTask('big');
    const token = tokens.issue(id, 'big', now + 60_000);
    const big = JSON.stringify('x'.repeat(MAX_EVENT_PAYLOAD_BYTES));
    expect((await post(`/callbacks/${token}`, big)).status).toBe(413);
    // The burst of 5 is spent (one above, four here); the next is refused until a token comes back.
    for (let i = 0; i < 4; i++) expect((await post(`/callbacks/x`, '1')).status).toBe(404);
    const limited = await post(`/callbacks/x`, '1');
    expect(limited.status).toBe(429);
    now += 1_000;
    expect((await post(`/callbacks/x`, '1')).status).toBe(404);
  });

  it('answers 405 to other methods and leaves other paths alone', async () => {
    const res = await fetch(`${base}/callbacks/x`);
    expect(res.status).toBe(405);
    expect((await fetch(`${base}/tasks/x`, { method: 'POST' })).status).toBe(404);
  });
});
