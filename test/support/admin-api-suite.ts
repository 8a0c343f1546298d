// One scenario of the operator API for every store: owners in two tenants, failed, completed and running tasks, and
// what each kind of caller may see and do.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminServer, waitUntil, type AdminServer, type Reply, type Who } from './admin-api.js';

type Item = Record<string, unknown> & { id: string; tenant: string; status: string };

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Every task the caller may see, through the cursor walk (`limit` per page). */
async function walk(server: AdminServer, who: Who, query: string, limit: number): Promise<Item[][]> {
  const pages: Item[][] = [];
  let cursor: string | undefined;
  do {
    const sep = query === '' ? '' : '&';
    const next = cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const reply = await server.api('GET', `/tasks?${query}${sep}limit=${limit}${next}`, who);
    expect(reply.status).toBe(200);
    pages.push(reply.body.items as Item[]);
    cursor = reply.body.next as string | undefined;
  } while (cursor !== undefined);
  return pages;
}

const list = async (server: AdminServer, who: Who, query = ''): Promise<Item[]> =>
  (await walk(server, who, query, 500)).flat();

const errorOf = (reply: Reply): unknown => reply.body.error;

export function defineAdminApiSuite(name: string, storeArgs: (dir: string) => string[]): void {
  describe(name, () => {
    let server: AdminServer;
    const ids: Record<string, string[]> = {};
    const statusOf = async (id: string): Promise<unknown> =>
      (await server.api('GET', `/tasks/${id}`, 'root')).body.status;

    beforeAll(async () => {
      server = await startAdminServer(storeArgs);
      // Each task's `run` names it for flaky_steps, whose step c fails once per run: a retry's new task has it too.
      const make = async (key: string, who: Who, tool: string, n: number) => {
        ids[key] = [];
        for (let i = 0; i < n; i++) ids[key].push(await server.create(who, tool, { run: `${key}-${i}` }));
      };
      await make('aliceFlaky', 'alice', 'flaky_steps', 3);
      await make('aliceQuick', 'alice', 'quick_job', 2);
      await make('aliceSlow', 'alice', 'slow_job', 1);
      await make('bobFlaky', 'bob', 'flaky_steps', 2);
      await make('bobQuick', 'bob', 'quick_job', 1);
      await make('bobSlow', 'bob', 'slow_job', 1);
      await waitUntil(async () => {
        const items = await list(server, 'root');
        const count = (s: string) => items.filter((t) => t.status === s).length;
        return count('failed') === 5 && count('completed') === 3 && count('working') === 2;
      }, 'the tasks to settle');
    }, 60_000);
    afterAll(async () => server?.close());

    it('refuses callers without credentials (401) and without the operator role (403)', async () => {
      const none = await server.api('GET', '/tasks');
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(errorOf(none)).toMatchObject({ code: 'unauthorized' });
      const foreign = await server.api('GET', '/tasks', 'root', { origin: 'http://evil.example' });
      expect(foreign.status).toBe(403);
      expect(JSON.stringify(foreign.body)).toMatch(/evil\.example/);
      const wrong = await server.api('GET', '/tasks', undefined, {
        authorization: 'Bearer not-a-known-token-at-all',
      });
      expect(wrong.status).toBe(401);
      for (const [method, path] of [
        ['GET', '/tasks'],
        ['GET', '/session'],
        ['GET', '/overview'],
        ['GET', `/tasks/${ids.aliceFlaky?.[0]}`],
        ['POST', `/tasks/${ids.aliceFlaky?.[0]}/retry`],
        ['DELETE', `/tasks/${ids.aliceQuick?.[0]}`],
      ] as const) {
        const reply = await server.api(method, path, 'alice');
        expect(reply.status, `${method} ${path}`).toBe(403);
        expect(reply.body).toEqual({ error: { code: 'forbidden', message: 'Operator role required' } });
        expect(reply.headers.get('content-type')).toBe('application/json');
        expect(reply.headers.get('cache-control')).toBe('no-store');
      }
      expect(await statusOf(ids.aliceFlaky?.[0] as string)).toBe('failed');
    });

    it('tells an operator who it is, its tenants and its CSRF token', async () => {
      const opsA = await server.api('GET', '/session', 'opsA');
      expect(opsA.status).toBe(200);
      expect(opsA.body).toEqual({
        tenant: 'A',
        principal: 'ops-a',
        operator: { tenants: ['A'] },
        csrfToken: expect.stringMatching(/^[\w-]{43}$/),
      });
      const root = await server.api('GET', '/session', 'root');
      expect(root.body).toMatchObject({ tenant: 'ops', principal: 'root', operator: { tenants: 'all' } });
      expect(root.body.csrfToken).not.toBe(opsA.body.csrfToken);
    });

    it('lists tasks with filters, newest first, each row without payloads', async () => {
      const all = await list(server, 'root');
      expect(all).toHaveLength(10);
      const created = all.map((t) => Date.parse(t.createdAt as string));
      expect(created).toEqual([...created].sort((a, b) => b - a));
      const failed = all.find((t) => t.status === 'failed') as Item;
      expect(Object.keys(failed).sort()).toEqual(
        [
          'attempt',
          'createdAt',
          'error',
          'id',
          'outcome',
          'principal',
          'status',
          'tenant',
          'tool',
          'updatedAt',
        ]
          .concat('statusMessage' in failed ? ['statusMessage'] : [])
          .concat('toolVersion' in failed ? ['toolVersion'] : [])
          .sort(),
      );
      expect(failed.createdAt).toMatch(ISO);
      expect(failed.error).toMatchObject({ code: expect.any(Number), message: expect.any(String) });
      const count = async (query: string) => (await list(server, 'root', query)).length;
      expect(await count('tenant=B')).toBe(4);
      expect(await count('principal=alice')).toBe(6);
      expect(await count('tenant=A&tool=flaky_steps')).toBe(3);
      expect(await count('toolVersion=2')).toBe(5);
      expect(await count('status=failed,completed')).toBe(8);
      expect(await count('status=working')).toBe(2);
      expect(await count('hasError=true')).toBe(5);
      expect(await count('hasError=false')).toBe(5);
      const message = (failed.error as { message: string }).message;
      expect(await count(`errorText=${encodeURIComponent(message.slice(0, 6).toUpperCase())}`)).toBe(5);
      const later = new Date(Date.now() + 60_000).toISOString();
      expect(await count(`createdFrom=${later}`)).toBe(0);
      expect(await count(`createdTo=${Date.now() + 60_000}`)).toBe(10);
      expect(await count(`updatedFrom=2000-01-01&updatedTo=${encodeURIComponent(later)}`)).toBe(10);
      const byUpdate = await list(server, 'root', 'sort=updated&order=asc');
      const updated = byUpdate.map((t) => Date.parse(t.updatedAt as string));
      expect(updated).toEqual([...updated].sort((a, b) => a - b));
    });

    it('walks every task once with a cursor, the last page without next', async () => {
      const pages = await walk(server, 'root', '', 3);
      expect(pages.map((p) => p.length)).toEqual([3, 3, 3, 1]);
      const walked = pages.flat().map((t) => t.id);
      expect(new Set(walked).size).toBe(10);
      expect(walked).toEqual((await list(server, 'root')).map((t) => t.id));
      const asc = (await walk(server, 'root', 'order=asc&tenant=A', 4)).flat().map((t) => t.id);
      expect(asc).toEqual((await list(server, 'root', 'order=asc&tenant=A')).map((t) => t.id));
      expect(asc).toHaveLength(6);
    });

    it('answers 400 to a malformed query', async () => {
      for (const query of [
        'limit=0',
        'limit=501',
        'limit=ten',
        'status=done',
        'sort=name',
        'order=up',
        'hasError=yes',
        'createdFrom=yesterday',
        'colour=blue',
        'tenant=A&tenant=B',
        'cursor=not-a-cursor',
      ]) {
        const reply = await server.api('GET', `/tasks?${query}`, 'root');
        expect(reply.status, query).toBe(400);
        expect(errorOf(reply), query).toMatchObject({ code: 'bad_request', message: expect.any(String) });
      }
      const windows = await server.api('GET', '/overview?windows=0', 'root');
      expect(windows.status).toBe(400);
    });

    it('keeps a tenant operator within its tenant: other tasks look absent', async () => {
      const mine = await list(server, 'opsA');
      expect(mine).toHaveLength(6);
      expect(mine.every((t) => t.tenant === 'A')).toBe(true);
      expect(await list(server, 'opsA', 'tenant=B')).toEqual([]);
      const bobs = [...(ids.bobFlaky ?? []), ...(ids.bobQuick ?? []), ...(ids.bobSlow ?? [])];
      for (const id of bobs) {
        const detail = await server.api('GET', `/tasks/${id}`, 'opsA');
        expect(detail.status).toBe(404);
        expect(detail.body).toEqual({ error: { code: 'not_found', message: 'Task not found' } });
        for (const [method, path] of [
          ['POST', `/tasks/${id}/cancel`],
          ['POST', `/tasks/${id}/retry`],
          ['DELETE', `/tasks/${id}`],
        ] as const)
          expect((await server.change(method, path, 'opsA')).status, `${method} ${path}`).toBe(404);
      }
      const sum = (reply: Reply) =>
        Object.values(reply.body.byStatus as Record<string, number>).reduce((a, b) => a + b, 0);
      const scoped = await server.api('GET', '/overview', 'opsA');
      expect(scoped.status).toBe(200);
      expect(sum(scoped)).toBe(6);
      expect(scoped.body).toMatchObject({
        byStatus: { failed: 3, completed: 2, working: 1 },
        byOutcome: { failed: 3, completed: 2, tool_error: 0, cancelled: 0 },
      });
      const whole = await server.api('GET', '/overview?windows=60000,3600000&stuckMs=1', 'root');
      expect(sum(whole)).toBe(10);
      expect(whole.body.windows).toEqual([
        { windowMs: 60_000, created: 10, completed: 3, failed: 5, toolErrors: 0 },
        { windowMs: 3_600_000, created: 10, completed: 3, failed: 5, toolErrors: 0 },
      ]);
      expect(whole.body.stuck).toBe(2);
      expect(await statusOf(ids.bobSlow?.[0] as string)).toBe('working');
    });

    it('shows a task in detail: owner, ISO times, steps and the failure, no payloads', async () => {
      const id = ids.aliceFlaky?.[0] as string;
      const reply = await server.api('GET', `/tasks/${id}`, 'opsA');
      expect(reply.status).toBe(200);
      const detail = reply.body;
      expect(detail).toMatchObject({
        id,
        tenant: 'A',
        principal: 'alice',
        tool: 'flaky_steps',
        toolVersion: '2',
        status: 'failed',
      });
      expect(detail.createdAt).toMatch(ISO);
      // Done steps carry when their attempt started and when their result was saved.
      const timed = { startedAt: expect.stringMatching(ISO), savedAt: expect.stringMatching(ISO) };
      expect(detail.steps).toEqual([
        { name: 'a', done: true, failedAttempts: 0, ...timed, durationMs: expect.any(Number) },
        { name: 'b', done: true, failedAttempts: 0, ...timed, durationMs: expect.any(Number) },
        {
          name: 'c',
          done: false,
          failedAttempts: 1,
          lastFailure: expect.objectContaining({ message: 'step c broke', at: expect.stringMatching(ISO) }),
        },
      ]);
      for (const step of detail.steps as { durationMs?: number }[])
        expect(step.durationMs ?? 0).toBeGreaterThanOrEqual(0);
      expect(detail.history).toEqual([
        { at: detail.createdAt, status: 'working', statusMessage: 'The task is now in progress.' },
        { at: expect.stringMatching(ISO), status: 'failed', statusMessage: expect.any(String) },
      ]);
      expect(detail.failure).toMatchObject({ message: 'step c broke', step: 'c' });
      for (const key of ['arguments', 'result', 'input', 'owner']) expect(detail).not.toHaveProperty(key);
    });

    it('names the process that holds a running task in its lease owner, as its log lines name it', async () => {
      const detail = (await server.api('GET', `/tasks/${ids.bobSlow?.[0]}`, 'root')).body;
      expect(detail.status).toBe('working');
      // The serving process's log lines carry its instance, <host>:<pid>.
      const logged = server.proc
        .stderr()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => (JSON.parse(line) as { instance?: unknown }).instance);
      const instance = logged.find((i) => typeof i === 'string') as string;
      expect(instance).toBe(`${hostname()}:${server.proc.child.pid}`);
      expect(detail.leaseOwner).toMatch(new RegExp(`^${instance.replace(/\./g, '\\.')}:w_[0-9a-f]{12}$`));
    });

    defineChanges(() => ({ server, ids, statusOf }));
    defineOutcomes(() => ({ server, ids, statusOf }));
  });
}

interface Scenario {
  server: AdminServer;
  ids: Record<string, string[]>;
  statusOf: (id: string) => Promise<unknown>;
}

/** The changes, in order after the reads above: CSRF, retry, cancel, purge, their audit lines. */
function defineChanges(get: () => Scenario): void {
  it('refuses a change without the caller’s CSRF token, before doing anything', async () => {
    const { server, ids, statusOf } = get();
    const id = ids.aliceFlaky?.[1] as string;
    const csrf = { error: { code: 'csrf', message: 'Missing or invalid X-CSRF-Token' } };
    const missing = await server.api('POST', `/tasks/${id}/retry`, 'root');
    expect([missing.status, missing.body]).toEqual([403, csrf]);
    const wrong = await server.api('POST', `/tasks/${id}/retry`, 'root', { 'x-csrf-token': 'x'.repeat(43) });
    expect(wrong.status).toBe(403);
    const theirs = (await server.api('GET', '/session', 'opsA')).body.csrfToken as string;
    const borrowed = await server.api('DELETE', `/tasks/${ids.aliceQuick?.[1]}`, 'root', {
      'x-csrf-token': theirs,
    });
    expect([borrowed.status, borrowed.body]).toEqual([403, csrf]);
    expect(await statusOf(id)).toBe('failed');
    expect(await statusOf(ids.aliceQuick?.[1] as string)).toBe('completed');
  });

  it('retries a failed task from its last finished step', async () => {
    const { server, ids, statusOf } = get();
    const id = ids.aliceFlaky?.[0] as string;
    const retried = await server.change('POST', `/tasks/${id}/retry`, 'root');
    expect(retried.status).toBe(200);
    const fork = retried.body.taskId as string;
    expect(retried.body).toEqual({ ok: true, taskId: expect.stringMatching(/^task_/) });
    expect(fork).not.toBe(id);
    ids.forks = [fork];
    await waitUntil(async () => (await statusOf(fork)) === 'completed', 'the new task to complete');
    // The new task ran only the step that had failed; the task retried stays as it ended.
    const ranFor = (task: string) =>
      readFileSync(server.logFile, 'utf8')
        .split('\n')
        .filter((l) => l.endsWith(` ${task}`))
        .sort();
    expect(ranFor(id)).toEqual([`step a ${id}`, `step b ${id}`, `step c ${id}`]);
    expect(ranFor(fork)).toEqual([`step c ${fork}`]);
    const original = (await server.api('GET', `/tasks/${id}`, 'root')).body;
    expect(original).toMatchObject({ status: 'failed', outcome: 'failed', retries: [fork] });
    expect((original.history as { status: string }[]).map((c) => c.status)).toEqual(['working', 'failed']);
    const made = (await server.api('GET', `/tasks/${fork}`, 'root')).body;
    expect(made).toMatchObject({ tenant: 'A', principal: 'alice', tool: 'flaky_steps', retryOf: id });
    expect(made).toMatchObject({ status: 'completed', outcome: 'completed', toolVersion: '2' });
    expect((made.history as { status: string }[]).map((c) => c.status)).toEqual(['working', 'completed']);
    const again = await server.change('POST', `/tasks/${fork}/retry`, 'root');
    expect(again.status).toBe(409);
    expect(errorOf(again)).toMatchObject({ code: 'not_failed' });
    const other = ids.aliceFlaky?.[2] as string;
    const second = await server.change('POST', `/tasks/${other}/retry`, 'opsA');
    expect(second.status).toBe(200);
    await waitUntil(
      async () => (await statusOf(second.body.taskId as string)) === 'completed',
      'the second retry to complete',
    );
    expect(await statusOf(other)).toBe('failed');
  });

  it('cancels an unfinished task and purges a finished one; 409 otherwise', async () => {
    const { server, ids, statusOf } = get();
    const slow = ids.aliceSlow?.[0] as string;
    expect((await server.change('POST', `/tasks/${slow}/cancel`, 'opsA')).body).toEqual({ ok: true });
    await waitUntil(async () => (await statusOf(slow)) === 'cancelled', 'the cancelled task to end');
    const twice = await server.change('POST', `/tasks/${slow}/cancel`, 'opsA');
    expect([twice.status, (errorOf(twice) as { code: string }).code]).toEqual([409, 'terminal']);
    const running = await server.change('DELETE', `/tasks/${ids.bobSlow?.[0]}`, 'root');
    expect([running.status, (errorOf(running) as { code: string }).code]).toEqual([409, 'not_terminal']);
    const done = ids.aliceQuick?.[0] as string;
    expect((await server.change('DELETE', `/tasks/${done}`, 'opsA')).body).toEqual({ ok: true });
    expect((await server.api('GET', `/tasks/${done}`, 'root')).status).toBe(404);
    expect((await server.change('DELETE', `/tasks/${done}`, 'opsA')).status).toBe(404);
    expect((await server.change('POST', '/tasks/no-such-task/cancel', 'root')).status).toBe(404);
  });

  it('answers 405 with Allow to another method', async () => {
    const { server } = get();
    const put = await server.api('PUT', '/tasks', 'root');
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'GET']);
    const get2 = await server.api('GET', '/tasks/x/cancel', 'root');
    expect([get2.status, get2.headers.get('allow')]).toEqual([405, 'POST']);
    const patch = await server.api('PATCH', '/tasks/x', 'root');
    expect([patch.status, patch.headers.get('allow')]).toEqual([405, 'GET, DELETE']);
  });

  it('writes an audit line for every change and every refusal', async () => {
    const { server, ids } = get();
    const lines = server.proc
      .stderr()
      .split('\n')
      .filter((l) => l.includes('"type":"audit"') && l.includes('"admin.'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const has = (expected: Record<string, unknown>) =>
      expect(
        lines.some((l) => Object.entries(expected).every(([k, v]) => l[k] === v)),
        JSON.stringify(expected),
      ).toBe(true);
    has({
      event: 'admin.retry',
      tenant: 'ops',
      principal: 'root',
      taskId: ids.aliceFlaky?.[0],
      outcome: 'ok',
    });
    has({ event: 'admin.retry', taskId: ids.aliceFlaky?.[0], retryTaskId: ids.forks?.[0], outcome: 'ok' });
    has({ event: 'admin.retry', taskId: ids.forks?.[0], outcome: 'not_failed' });
    has({
      event: 'admin.cancel',
      tenant: 'A',
      principal: 'ops-a',
      taskId: ids.aliceSlow?.[0],
      outcome: 'ok',
    });
    has({ event: 'admin.cancel', taskId: ids.aliceSlow?.[0], outcome: 'terminal' });
    has({ event: 'admin.purge', taskId: ids.aliceQuick?.[0], outcome: 'ok' });
    has({ event: 'admin.purge', taskId: ids.bobSlow?.[0], outcome: 'not_terminal' });
    has({ event: 'admin.cancel', principal: 'ops-a', taskId: ids.bobSlow?.[0], outcome: 'not_found' });
    has({ event: 'admin.denied', principal: 'root', taskId: ids.aliceFlaky?.[1], outcome: 'csrf' });
    has({ event: 'admin.denied', tenant: 'A', principal: 'alice', outcome: 'not an operator' });
    expect(lines.filter((l) => l.event !== 'admin.denied').every((l) => typeof l.taskId === 'string')).toBe(
      true,
    );
  });
}

/** Tool errors, after the changes above: found by outcome, counted, and retried as new tasks. */
function defineOutcomes(get: () => Scenario): void {
  const toolErrors = async (server: AdminServer): Promise<[string, string]> => {
    const alice = await server.create('alice', 'flaky_steps', { run: 'alice-tool-error', toolError: true });
    const bob = await server.create('bob', 'flaky_steps', { run: 'bob-tool-error', toolError: true });
    for (const id of [alice, bob])
      await waitUntil(
        async () => (await server.api('GET', `/tasks/${id}`, 'root')).body.status === 'completed',
        'the tool error',
      );
    return [alice, bob];
  };

  it('finds the tasks that ended in a tool error by outcome, and counts them apart', async () => {
    const { server, ids } = get();
    const [alice, bob] = await toolErrors(server);
    ids.toolErrors = [alice, bob];
    const found = await list(server, 'root', 'outcome=tool_error');
    expect(found.map((t) => [t.id, t.status, t.outcome])).toEqual([
      [bob, 'completed', 'tool_error'],
      [alice, 'completed', 'tool_error'],
    ]);
    expect((await list(server, 'opsA', 'outcome=tool_error')).map((t) => t.id)).toEqual([alice]);
    const retryable = await list(server, 'root', 'outcome=failed,tool_error');
    expect(retryable.filter((t) => t.status === 'completed').map((t) => t.id)).toEqual([bob, alice]);
    expect(retryable.every((t) => t.outcome === 'failed' || t.outcome === 'tool_error')).toBe(true);
    expect((await list(server, 'root', 'outcome=completed')).some((t) => t.id === alice)).toBe(false);
    expect((await list(server, 'root', 'hasError=true')).map((t) => t.id)).toEqual(
      expect.arrayContaining([alice, bob]),
    );
    expect(
      (await list(server, 'root', 'errorText=STEP%20C%20BROKE&status=completed')).map((t) => t.id),
    ).toEqual([bob, alice]);
    const bad = await server.api('GET', '/tasks?outcome=broken', 'root');
    expect([bad.status, (errorOf(bad) as { code: string }).code]).toEqual([400, 'bad_request']);
    const whole = (await server.api('GET', '/overview', 'root')).body;
    const byStatus = whole.byStatus as Record<string, number>;
    expect(whole.byOutcome).toEqual({
      completed: (byStatus.completed ?? 0) - 2,
      tool_error: 2,
      failed: byStatus.failed,
      cancelled: byStatus.cancelled,
    });
    expect((whole.windows as { toolErrors: number }[]).map((w) => w.toolErrors)).toEqual([2, 2]);
    const scoped = (await server.api('GET', '/overview', 'opsA')).body;
    expect(scoped.byOutcome).toMatchObject({ tool_error: 1 });
  });

  it('retries a task that ended in a tool error as a new task; the task stays completed', async () => {
    const { server, ids, statusOf } = get();
    const id = ids.toolErrors?.[0] as string;
    const retried = await server.change('POST', `/tasks/${id}/retry`, 'opsA');
    expect(retried.status).toBe(200);
    const fork = retried.body.taskId as string;
    expect(fork).toMatch(/^task_/);
    expect(fork).not.toBe(id);
    await waitUntil(async () => (await statusOf(fork)) === 'completed', 'the new task to complete');
    const made = (await server.api('GET', `/tasks/${fork}`, 'opsA')).body;
    expect(made).toMatchObject({ status: 'completed', outcome: 'completed', retryOf: id });
    expect((made.steps as { name: string; done: boolean }[]).map((s) => [s.name, s.done])).toEqual([
      ['a', true],
      ['b', true],
      ['c', true],
    ]);
    const ran = readFileSync(server.logFile, 'utf8').split('\n');
    expect(ran.filter((l) => l.endsWith(` ${fork}`))).toEqual([`step c ${fork}`]);
    const original = (await server.api('GET', `/tasks/${id}`, 'opsA')).body;
    expect(original).toMatchObject({ status: 'completed', outcome: 'tool_error', retries: [fork] });
    // Its owner finds the new task as theirs.
    const owned = await server.ownerGet('alice', fork);
    expect(owned).toMatchObject({ taskId: fork, status: 'completed' });
    const audit = server.proc
      .stderr()
      .split('\n')
      .filter((l) => l.includes('"event":"admin.retry"') && l.includes(fork));
    expect(audit.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ principal: 'ops-a', taskId: id, retryTaskId: fork, outcome: 'ok' }),
    ]);
  });
}
