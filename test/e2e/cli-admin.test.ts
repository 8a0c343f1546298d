// `durable-mcp admin …` in subprocesses against a fake operator API: the requests it sends (auth, CSRF, query), what
// it prints for people and as JSON, cursor following, and the exit code of every refusal.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';
import {
  CSRF_TOKEN,
  OPERATOR_TOKEN,
  SESSION_COOKIE,
  startFakeAdminApi,
  USER_TOKEN,
  type FakeAdminApi,
  type FakeTask,
} from '../support/fake-admin-api.js';

const T0 = Date.parse('2026-01-10T00:00:00Z');
const MIN = 60_000;
const TASKS: FakeTask[] = [
  { id: 'task_a', tenant: 'acme', principal: 'alice', tool: 'report', toolVersion: '2', status: 'completed', outcome: 'tool_error', createdAt: T0, updatedAt: T0 + MIN, attempt: 1 },
  { id: 'task_b', tenant: 'acme', principal: 'bob', tool: 'report', toolVersion: '2', status: 'failed', outcome: 'failed', createdAt: T0 + MIN, updatedAt: T0 + 2 * MIN, attempt: 3, error: { code: -32603, message: `upstream 502 from billing ${'x'.repeat(80)}` } },
  { id: 'task_c', tenant: 'globex', principal: 'carol', tool: 'export', status: 'working', createdAt: T0 + 2 * MIN, updatedAt: T0 + 3 * MIN, attempt: 1 },
  { id: 'task_d', tenant: 'globex', principal: 'carol', tool: 'export', status: 'input_required', createdAt: T0 + 3 * MIN, updatedAt: T0 + 4 * MIN, attempt: 1 },
  { id: 'task_e', tenant: 'acme', principal: 'alice', tool: 'report', toolVersion: '1', status: 'cancelled', outcome: 'cancelled', createdAt: T0 + 4 * MIN, updatedAt: T0 + 5 * MIN, attempt: 2 },
]; // prettier-ignore

let api: FakeAdminApi;
let bare: FakeAdminApi; // a server without an operator API
let staleCsrf: FakeAdminApi; // a server whose actions refuse the CSRF token its session handed out

beforeAll(async () => {
  api = await startFakeAdminApi(TASKS);
  bare = await startFakeAdminApi(TASKS, { surface: false });
  staleCsrf = await startFakeAdminApi(TASKS, { sessionCsrf: 'stale' });
});
afterAll(async () => Promise.all([api.close(), bare.close(), staleCsrf.close()]));
beforeEach(() => {
  for (const server of [api, bare, staleCsrf]) {
    server.requests.length = 0;
    server.tasks.clear();
    for (const t of TASKS) server.tasks.set(t.id, { ...t });
  }
});

interface Run {
  code: number | null;
  out: string;
  err: string;
}

/** Runs `durable-mcp admin …` asynchronously (the fake answers from this process), with the operator's token. */
function admin(args: string[], env: Record<string, string> = {}, server = api): Promise<Run> {
  const flags = env.DURABLE_MCP_URL === undefined && !args.includes('--url') ? ['--url', server.url] : [];
  const token =
    env.DURABLE_MCP_TOKEN === undefined && !args.includes('--token') ? ['--token', OPERATOR_TOKEN] : [];
  const clean = { ...process.env, DURABLE_MCP_URL: undefined, DURABLE_MCP_TOKEN: undefined };
  const child = spawn(process.execPath, [BIN, 'admin', ...args, ...flags, ...token], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...clean, ...env },
  });
  child.stdin.end();
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

const paths = (server = api): string[] => server.requests.map((r) => `${r.method} ${r.path}`);

describe('durable-mcp admin tasks list', () => {
  it('prints a table with the next cursor, sending the operator token to /admin/api/v1 at the origin of --url', async () => {
    const r = await admin(['tasks', 'list', '--limit', '3']);
    expect(r).toMatchObject({ code: 0, err: '' });
    const lines = r.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +STATUS +OUTCOME +TOOL +OWNER +CREATED +UPDATED +ATTEMPT +ERROR$/);
    expect(lines[1]).toMatch(
      /^task_e +cancelled +cancelled +report@1 +acme\/alice +2026-01-10 00:04:00 +2026-01-10 00:05:00 +2$/,
    );
    expect(lines[2]).toMatch(/^task_d +input_required +- +export +globex\/carol /);
    expect(lines[3]).toMatch(/^task_c +working +- /);
    expect(lines[4]).toBe('next page: --cursor c3');
    expect(api.requests).toEqual([
      { method: 'GET', path: '/admin/api/v1/tasks', query: { limit: '3' }, authorization: `Bearer ${OPERATOR_TOKEN}`, csrf: undefined, cookie: undefined },
    ]); // prettier-ignore
    const next = await admin(['tasks', 'list', '--limit', '3', '--cursor', 'c3']);
    expect(next.out).toMatch(/^task_b +failed +failed /m);
    expect(next.out).toMatch(/^task_a +completed +tool_error +report@2 /m);
    expect(next.out).toContain(`upstream 502 from billing ${'x'.repeat(33)}…`); // shortened to 60
    expect(next.out).not.toContain('next page');
  });

  it('sends every filter as the API names it; the URL and token may come from the environment', async () => {
    const r = await admin(
      ['tasks', 'list', '--tenant', 'acme', '--principal', 'bob', '--tool', 'report', '--tool-version', '2',
        '--status', 'failed,working', '--created-from', '2026-01-10T00:00:00Z', '--created-to', String(T0 + 10 * MIN),
        '--updated-from', '2026-01-10', '--updated-to', '2026-01-11T00:00:00+01:00', '--has-error',
        '--error-text', 'BILLING', '--sort', 'updated', '--order', 'asc', '--limit', '10'],
      { DURABLE_MCP_URL: api.url, DURABLE_MCP_TOKEN: OPERATOR_TOKEN },
    ); // prettier-ignore
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^task_b +failed +failed +report@2 +acme\/bob/m);
    expect(r.out.trim().split('\n')).toHaveLength(2);
    expect(api.requests[0]?.authorization).toBe(`Bearer ${OPERATOR_TOKEN}`);
    expect(api.requests[0]?.query).toEqual({
      tenant: 'acme',
      principal: 'bob',
      tool: 'report',
      toolVersion: '2',
      status: 'failed,working',
      createdFrom: '2026-01-10T00:00:00.000Z',
      createdTo: '2026-01-10T00:10:00.000Z',
      updatedFrom: '2026-01-10T00:00:00.000Z',
      updatedTo: '2026-01-10T23:00:00.000Z',
      hasError: 'true',
      errorText: 'BILLING',
      sort: 'updated',
      order: 'asc',
      limit: '10',
    });
    await admin(['tasks', 'list', '--no-error', '--status', 'completed']);
    expect(api.requests[1]?.query).toEqual({ hasError: 'false', status: 'completed' });
    const toolErrors = await admin(['tasks', 'list', '--outcome', 'tool_error,failed']);
    expect(api.requests[2]?.query).toEqual({ outcome: 'tool_error,failed' });
    expect(
      toolErrors.out
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((l) => l.split(/ +/)[0]),
    ).toEqual(['task_b', 'task_a']);
  });

  it('--output json prints the page as the API sent it; --all follows the cursors into one object', async () => {
    const page = JSON.parse((await admin(['tasks', 'list', '--limit', '2', '--output', 'json'])).out) as {
      items: { id: string; createdAt: string }[];
      next: string;
    };
    expect(page.items.map((t) => t.id)).toEqual(['task_e', 'task_d']);
    expect(page.items[0]?.createdAt).toBe('2026-01-10T00:04:00.000Z');
    expect(page.next).toBe('c2');
    api.requests.length = 0;
    const all = await admin([
      'tasks',
      'list',
      '--all',
      '--limit',
      '2',
      '--output',
      'json',
      '--tenant',
      'acme',
    ]);
    expect(JSON.parse(all.out)).toEqual({
      items: ['task_e', 'task_b', 'task_a'].map((id) => expect.objectContaining({ id })),
    });
    expect(api.requests.map((r) => r.query)).toEqual([
      { tenant: 'acme', limit: '2' },
      { tenant: 'acme', limit: '2', cursor: 'c2' },
    ]);
  });

  it('--all stops at --max and says where to go on; without --limit it asks for pages of 500', async () => {
    const json = JSON.parse((await admin(['tasks', 'list', '--all', '--max', '3', '--limit', '2', '--output', 'json'])).out) as {
      items: unknown[];
      next: string;
    }; // prettier-ignore
    expect(json.items).toHaveLength(3);
    expect(json.next).toBe('c3');
    expect(api.requests.map((r) => r.query.limit)).toEqual(['2', '1']);
    const human = await admin(['tasks', 'list', '--all', '--max', '4']);
    expect(human.out.trimEnd().split('\n')).toHaveLength(6);
    expect(human.out).toMatch(/stopped at --max 4; next page: --cursor c4\n$/);
    expect(api.requests.at(-1)?.query).toEqual({ limit: '4' });
    await admin(['tasks', 'list', '--all']);
    expect(api.requests.at(-1)?.query).toEqual({ limit: '500' });
  });

  it('refuses bad flags with exit 2 before sending anything', async () => {
    const cases: [string[], RegExp][] = [
      [['--status', 'done'], /--status: unknown status "done"/],
      [
        ['--outcome', 'crashed'],
        /--outcome: unknown outcome "crashed" \(one or more of completed, tool_error, failed, cancelled\)/,
      ],
      [['--limit', '0'], /--limit must be at least 1/],
      [['--limit', '501'], /--limit must be at most 500/],
      [['--has-error', '--no-error'], /exclude each other/],
      [['--created-from', 'yesterday'], /--created-from must be an ISO 8601 time/],
      [
        ['--updated-from', '2026-01-02', '--updated-to', '2026-01-01'],
        /--updated-from must be before --updated-to/,
      ],
      [['--sort', 'name'], /--sort must be created or updated/],
      [['--order', 'up'], /--order must be asc or desc/],
      [['--max', '5'], /--max goes with --all/],
      [['--all', '--max', '0'], /--max must be at least 1/],
      [['--output', 'yaml'], /--output must be json/],
      [['--url', 'not a url'], /--url must be the server's URL/],
      [['--bogus'], /Unknown option '--bogus'/],
      [['extra'], /unexpected "extra"/],
    ];
    const runs = await Promise.all(cases.map(([flags]) => admin(['tasks', 'list', ...flags])));
    for (const [i, [flags, message]] of cases.entries()) {
      const r = runs[i] as Run;
      expect({ flags, code: r.code, err: r.err }).toMatchObject({
        code: 2,
        err: expect.stringMatching(message),
      });
    }
    expect(api.requests).toEqual([]);
  });

  it('names the operator role on 401 and 403, and says so when the server has no operator API (exit 3)', async () => {
    const anonymous = await admin(['tasks', 'list'], { DURABLE_MCP_TOKEN: '' });
    expect(anonymous.code).toBe(3);
    expect(anonymous.err).toMatch(/^not authenticated \(401\): the admin commands need an operator's token/);
    expect(anonymous.err).toContain('"roles": ["operator"]');
    const user = await admin(['tasks', 'list', '--token', USER_TOKEN]);
    expect(user.code).toBe(3);
    expect(user.err).toMatch(/^forbidden \(403\): this token does not have the operator role/);
    const none = await admin(['tasks', 'list'], {}, bare);
    expect(none.code).toBe(3);
    expect(none.err).toContain(`no operator API at ${new URL(bare.url).origin}/admin/api/v1 (404)`);
    const badCursor = await admin(['tasks', 'list', '--cursor', 'garbage']);
    expect(badCursor).toMatchObject({ code: 2, err: 'the server refused the request: malformed cursor\n' });
    const down = await admin(['tasks', 'list', '--url', 'http://127.0.0.1:1/mcp']);
    expect(down.code).toBe(3);
    expect(down.err).toMatch(/^error: cannot reach http:\/\/127\.0\.0\.1:1\/admin\/api\/v1/);
  });
});

describe('durable-mcp admin and gateway tasks whose outcome is unknown', () => {
  const unknown: FakeTask = {
    id: 'task_g', tenant: 'acme', principal: 'alice', tool: 'send_payment', status: 'failed', outcome: 'failed',
    createdAt: T0 + 6 * MIN, updatedAt: T0 + 7 * MIN, attempt: 2,
    error: { code: -32603, message: 'outcome unknown: the upstream may have done this; check before retrying', outcome: 'unknown' },
    upstream: { upstream: 'stdio:node up.mjs', dispatch: 'dispatched', step: 'dispatched', recordStep: 'upstream' },
  }; // prettier-ignore

  it('lists them with --error-outcome unknown, and refuses a word that is not one', async () => {
    api.tasks.set(unknown.id, { ...unknown });
    const r = await admin(['tasks', 'list', '--error-outcome', 'unknown']);
    expect(r.code).toBe(0);
    expect(api.requests[0]?.query).toEqual({ errorOutcome: 'unknown' });
    expect(r.out).toContain('task_g');
    expect(r.out).not.toContain('task_b');
    const refused = await admin(['tasks', 'list', '--error-outcome', 'Not a word']);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('--error-outcome');
    expect(api.requests).toHaveLength(1);
  });

  it('shows the upstream and dispatch state, and what an operator can do', async () => {
    api.tasks.set(unknown.id, { ...unknown });
    const r = await admin(['tasks', 'get', 'task_g']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('upstream: stdio:node up.mjs\ndispatch: dispatched: sent, no answer kept (the upstream may have done it)\n');
    expect(r.out).toContain('durable-mcp admin tasks retry task_g --record-step upstream --value @result.json');
    expect(r.out).toContain('or leave it failed');
    api.tasks.set('task_f', { ...unknown, id: 'task_f', error: undefined, status: 'working', outcome: undefined,
      upstream: { upstream: 'stdio:node up.mjs', dispatch: 'following', upstreamTaskId: 'up-\u001b[31m7' } }); // prettier-ignore
    const following = await admin(['tasks', 'get', 'task_f']);
    expect(following.out).toContain('dispatch: following upstream task up-');
    expect(following.out).not.toContain('\u001b[31m');
    expect(following.out).not.toContain('record-step');
    // An upstream task that was lost: its answer is kept, there is nothing to record.
    api.tasks.set('task_h', { ...unknown, id: 'task_h',
      upstream: { upstream: 'stdio:node up.mjs', dispatch: 'following', step: 'upstream', upstreamTaskId: 'up-8' } }); // prettier-ignore
    const lost = await admin(['tasks', 'get', 'task_h']);
    expect(lost.out).toContain('dispatch: following upstream task up-8\n');
    expect(lost.out).toContain('record what it did:  not possible, the upstream’s answer is kept');
    expect(lost.out).not.toContain('--record-step');
  }); // prettier-ignore
});

describe('durable-mcp admin tasks get|cancel|retry|purge', () => {
  it('get shows steps, attempts, lease and errors, or the JSON detail; an unknown id is exit 1', async () => {
    const failed = await admin(['tasks', 'get', 'task_b']);
    expect(failed.code).toBe(0);
    expect(failed.out).toContain('task_b: failed\n  tool report@2, owner acme/bob, runs 3\n');
    expect(failed.out).toContain('  created 2026-01-10T00:01:00.000Z, updated 2026-01-10T00:02:00.000Z, expires 2026-01-10T01:01:00.000Z');
    expect(failed.out).toContain('  tool error err_1 in step "fetch", attempt 3: Error: upstream 502');
    expect(failed.out).toContain('    fetch: not done; 3 failed attempts, last Error: upstream 502 (no retry left)');
    expect(failed.out).toContain('  error {"code":-32603,"message":"upstream 502 from billing');
    const working = await admin(['tasks', 'get', 'task_c']);
    expect(working.out).toContain('  leased by worker-a until 2026-01-10T00:03:30.000Z');
    expect(working.out).toContain('  history (UTC):\n    00:02:00.000 working: Queued.\n  steps:\n    fetch: done in 12 ms (started 00:02:01.000)\n    render: not done');
    expect(failed.out).toContain('  history (UTC):\n    00:01:00.000 working: Queued.\n    00:02:00.000 failed\n');
    const json = JSON.parse((await admin(['tasks', 'get', 'task_c', '--output', 'json'])).out) as object;
    expect(json).toMatchObject({ id: 'task_c', leaseOwner: 'worker-a', steps: [{ name: 'fetch' }, { name: 'render' }] });
    expect(await admin(['tasks', 'get', 'task_zz'])).toMatchObject({ code: 1, err: 'task not found: task_zz\n' });
    const none = await admin(['tasks', 'get', 'task_b'], {}, bare);
    expect(none.code).toBe(3);
    expect(none.err).toContain('no operator API');
  }); // prettier-ignore

  it('cancel and retry fetch /session first and send its CSRF token (and cookie) with the action', async () => {
    const cancel = await admin(['tasks', 'cancel', 'task_c']);
    expect(cancel).toMatchObject({ code: 0, out: 'cancel requested for task task_c\n' });
    expect(paths()).toEqual(['GET /admin/api/v1/session', 'POST /admin/api/v1/tasks/task_c/cancel']);
    expect(api.requests[1]).toMatchObject({ csrf: CSRF_TOKEN, cookie: SESSION_COOKIE });
    expect(api.requests[1]?.authorization).toBe(`Bearer ${OPERATOR_TOKEN}`);
    expect(api.tasks.get('task_c')?.cancelRequested).toBe(true);
    const retry = await admin(['tasks', 'retry', 'task_b', '--output', 'json']);
    expect(retry.code).toBe(0);
    const made = (JSON.parse(retry.out) as { taskId: string }).taskId;
    expect(JSON.parse(retry.out)).toEqual({ ok: true, taskId: made, id: 'task_b', action: 'retry' });
    expect(api.tasks.get(made)?.status).toBe('working');
    expect(api.tasks.get('task_b')?.status).toBe('failed');
    // A tool error is retried too, and people are told the new task's id.
    const again = await admin(['tasks', 'retry', 'task_a']);
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/^task task_a retried as new task task_a_retry\d+\n$/);
  });

  it('a refused action says why and exits 1; not an operator or a refused CSRF token exits 3', async () => {
    expect(await admin(['tasks', 'cancel', 'task_a'])).toMatchObject({
      code: 1,
      err: 'task task_a is already finished: nothing to cancel\n',
    });
    expect(await admin(['tasks', 'retry', 'task_c'])).toMatchObject({
      code: 1,
      err: 'task task_c neither failed nor ended in a tool error: only those can be retried (admin tasks get task_c)\n',
    });
    expect(await admin(['tasks', 'purge', 'task_d', '--yes'])).toMatchObject({
      code: 1,
      err: 'task task_d is not finished: only finished tasks can be purged (cancel it first)\n',
    });
    expect(await admin(['tasks', 'retry', 'task_zz'])).toMatchObject({
      code: 1,
      err: 'task not found: task_zz\n',
    });
    const user = await admin(['tasks', 'cancel', 'task_c', '--token', USER_TOKEN]);
    expect(user.code).toBe(3);
    expect(user.err).toContain('operator role');
    const csrf = await admin(['tasks', 'cancel', 'task_c'], {}, staleCsrf);
    expect(csrf.code).toBe(3);
    expect(csrf.err).toMatch(/^the server refused the action's CSRF token \(403\)/);
    const none = await admin(['tasks', 'cancel', 'task_c'], {}, bare);
    expect(none.code).toBe(3);
    expect(paths(bare)).toEqual(['GET /admin/api/v1/session']);
  });

  it('purge needs --yes without a terminal (exit 2, nothing sent); with it the task is gone', async () => {
    const refused = await admin(['tasks', 'purge', 'task_a']);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('pass --yes');
    expect(api.requests).toEqual([]);
    expect(await admin(['tasks', 'purge', 'task_a', '--yes'])).toMatchObject({
      code: 0,
      out: 'task task_a purged\n',
    });
    expect(paths()).toEqual(['GET /admin/api/v1/session', 'DELETE /admin/api/v1/tasks/task_a']);
    expect(api.tasks.has('task_a')).toBe(false);
  });

  it('on a terminal, purge asks first: y purges, anything else purges nothing (exit 1)', async () => {
    const inTerminal = async (answer: string): Promise<{ code: number | null; screen: string }> => {
      const command = `${process.execPath} ${BIN} admin tasks purge task_e --url ${api.url} --token ${OPERATOR_TOKEN}`;
      const child = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
      let screen = '';
      child.stdout.on('data', (c: Buffer) => (screen += c.toString()));
      for (let i = 0; i < 200 && !screen.includes('[y/N]'); i++) await new Promise((r) => setTimeout(r, 25));
      expect(screen).toContain('purge task task_e and everything kept about it? [y/N]');
      expect(api.requests).toEqual([]); // asked before sending anything
      child.stdin.write(`${answer}\r`);
      const code = await new Promise<number | null>((r) => child.on('exit', r));
      return { code, screen };
    };
    const declined = await inTerminal('n');
    expect(declined.code).toBe(1);
    expect(declined.screen).toContain('nothing purged');
    expect(api.tasks.has('task_e')).toBe(true);
    const accepted = await inTerminal('y');
    expect(accepted.code).toBe(0);
    expect(accepted.screen).toContain('task task_e purged');
    expect(api.tasks.has('task_e')).toBe(false);
  }, 30_000);

  it('usage errors: a missing or extra id, an unknown verb', async () => {
    const cases = [['tasks', 'get'], ['tasks', 'cancel', 'a', 'b'], ['tasks', 'frob', 'x'], ['tasks'], ['nope']];
    const codes = await Promise.all(cases.map(async (args) => (await admin(args)).code));
    expect(codes).toEqual(cases.map(() => 2));
    expect(api.requests).toEqual([]);
  }); // prettier-ignore
});

describe('durable-mcp admin overview', () => {
  it('asks for the 1h and 24h windows and 15m stuck by default and prints a summary', async () => {
    const r = await admin(['overview']);
    expect(r.code).toBe(0);
    expect(api.requests[0]?.query).toEqual({ windows: '3600000,86400000', stuckMs: '900000' });
    expect(r.out).toContain('tasks: working 1, input_required 1, completed 1, failed 1, cancelled 1\n');
    expect(r.out).toContain('finished: completed 0, tool_error 1, failed 1, cancelled 1\n');
    expect(r.out).toContain('stuck (unfinished, not updated for 15m): 2\n');
    expect(r.out).toContain('last 1h: created 5, completed 1, failed 1, tool errors 0\nlast 1d: created 5, completed 1, failed 1, tool errors 0\n');
    expect(r.out).toMatch(/^by tool:\n {2}report@2 +completed 1, failed 1\n {2}export +working 1, input_required 1\n {2}report@1 +cancelled 1\n/m);
  }); // prettier-ignore

  it('takes durations or ms, prints JSON, and refuses what is not a duration', async () => {
    const r = await admin(['overview', '--windows', '30s,7d,5000', '--stuck', '1h', '--output', 'json']);
    expect(r.code).toBe(0);
    expect(api.requests[0]?.query).toEqual({ windows: '30000,604800000,5000', stuckMs: '3600000' });
    const json = JSON.parse(r.out) as { byStatus: object; windows: { windowMs: number }[]; stuck: number };
    expect(json.byStatus).toEqual({ working: 1, input_required: 1, completed: 1, failed: 1, cancelled: 1 });
    expect(json.windows.map((w) => w.windowMs)).toEqual([30_000, 604_800_000, 5000]);
    for (const bad of [
      ['--stuck', '1w'],
      ['--windows', '1h,,2h'],
      ['--windows', '-5m'],
    ]) {
      const refused = await admin(['overview', ...bad]);
      expect({ bad, code: refused.code }).toEqual({ bad, code: 2 });
    }
    // The health the server reports, read beside the counts.
    expect(paths()).toEqual(['GET /admin/api/v1/overview', 'GET /admin/api/v1/health']);
    expect((json as { health?: unknown }).health).toMatchObject({
      components: [{ kind: 'upstream', status: 'down' }],
    });
    expect((await admin(['overview', '--token', USER_TOKEN])).code).toBe(3);
  });

  it('prints the server’s health after the counts: the gateway’s upstream, up or down since when', async () => {
    const r = await admin(['overview']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('upstream stdio:node up.mjs: down since 2026-01-10 00:05:00; 12 calls, 2 errors, mean 40 ms\n');
  }); // prettier-ignore

  it('every command has --help', async () => {
    const help = async (...args: string[]) => (await admin([...args, '--help'])).out;
    expect(await help()).toContain('tasks list [filters]');
    expect(await help('tasks', 'list')).toContain('--has-error | --no-error');
    expect(await help('tasks', 'list')).toContain('--outcome O1,O2');
    expect(await help('tasks', 'purge')).toContain('--yes');
    expect(await help('overview')).toContain('--windows D1,D2');
    expect(api.requests).toEqual([]);
  });
});
