// `durable-mcp admin` against a real server's operator API (not a stand-in): list with filters and every page, the
// detail of a failed task, retry from its last finished step (as a new task), cancel, purge and the overview, as
// operators scoped to one tenant and to all of them; bulk changes by a filter; pausing and resuming a tool; a
// parent's child tasks and a child's parent.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../src/advanced.js';
import { startAdminServer, TOKENS, waitUntil, type AdminServer, type Who } from '../support/admin-api.js';
import { BIN } from '../support/cli.js';

let server: AdminServer;
const failed: string[] = [];
let quickB = '';
let slowA = '';
let askingA = '';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function admin(who: Who, args: string[]): Promise<Run> {
  const child = spawn(process.execPath, [BIN, 'admin', ...args, '--url', server.proc.url], {
    env: { ...process.env, DURABLE_MCP_TOKEN: TOKENS[who] },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

const json = async (who: Who, args: string[]): Promise<Record<string, unknown>> => {
  const run = await admin(who, [...args, '--output', 'json']);
  if (run.code !== 0) throw new Error(`admin ${args.join(' ')}: exit ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout) as Record<string, unknown>;
};

const statusOf = async (id: string): Promise<string> =>
  String((await server.api('GET', `/tasks/${id}`, 'root')).body.status);

beforeAll(async () => {
  server = await startAdminServer((dir) => ['--store', join(dir, 'tasks.db')]);
  // Step c fails once per `run`: a retry's new task, with the same arguments, gets past it.
  for (let i = 0; i < 3; i += 1)
    failed.push(await server.create('alice', 'flaky_steps', { run: `cli-${i}` }));
  quickB = await server.create('bob', 'quick_job');
  slowA = await server.create('alice', 'slow_job', { ms: 60_000 });
  // Asking for input needs a client that takes elicitation.
  const asker = createHttpClient({
    url: server.proc.url,
    token: TOKENS.alice,
    capabilities: { elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } },
  });
  askingA = String((await asker.request('tools/call', { name: 'ask_job', arguments: {} })).result.taskId);
  for (const id of failed) await waitUntil(async () => (await statusOf(id)) === 'failed', `${id} to fail`);
  await waitUntil(async () => (await statusOf(quickB)) === 'completed', 'the quick job');
  await waitUntil(async () => (await statusOf(askingA)) === 'input_required', 'the question');
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe('durable-mcp admin against the operator API', () => {
  it('lists with filters, following every page, within the operator’s tenants', async () => {
    const all = await json('root', ['tasks', 'list', '--all', '--limit', '2']);
    const ids = (all.items as { id: string }[]).map((t) => t.id);
    expect(new Set(ids)).toEqual(new Set([...failed, quickB, slowA, askingA]));
    const flaky = await json('root', ['tasks', 'list', '--tool', 'flaky_steps', '--status', 'failed']);
    expect((flaky.items as { id: string }[]).map((t) => t.id).sort()).toEqual([...failed].sort());
    // The operator of tenant A never sees tenant B's task.
    const scoped = await json('opsA', ['tasks', 'list', '--all']);
    expect((scoped.items as { id: string }[]).map((t) => t.id)).not.toContain(quickB);
    expect((await admin('opsA', ['tasks', 'get', quickB])).code).toBe(1);
    // People get a table naming the tasks.
    const table = await admin('root', ['tasks', 'list', '--has-error']);
    expect(table.code).toBe(0);
    for (const id of failed) expect(table.stdout).toContain(id);
    // Each row says how the task ended; --outcome finds them by it.
    const ended = await admin('root', ['tasks', 'list', '--outcome', 'failed,tool_error']);
    const lines = ended.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +STATUS +OUTCOME +TOOL /);
    expect(lines.slice(1).map((l) => l.split(/ +/).slice(0, 3))).toEqual(
      [...failed].reverse().map((id) => [id, 'failed', 'failed']),
    );
    // An ordinary user is told the operator role is needed.
    const refused = await admin('alice', ['tasks', 'list']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/operator/i);
  });

  it('shows a failed task, retries it from its last finished step, and cancels and purges', async () => {
    const [first] = failed as [string];
    const detail = await admin('opsA', ['tasks', 'get', first]);
    expect(detail.code).toBe(0);
    expect(detail.stdout).toContain('flaky_steps@2');
    expect(detail.stdout).toMatch(/step c broke/);
    // A task that waits names the input it waits for (its key, never the request's content).
    expect((await admin('opsA', ['tasks', 'get', askingA])).stdout).toContain('waiting for input: go');
    const retried = await admin('opsA', ['tasks', 'retry', first]);
    expect(retried.code).toBe(0);
    const fork = /^task \S+ retried as new task (task_\S+)$/.exec(retried.stdout.trim())?.[1] ?? '';
    expect(fork).not.toBe('');
    await waitUntil(async () => (await statusOf(fork)) === 'completed', 'the new task');
    const ran = readFileSync(server.logFile, 'utf8').split('\n');
    expect(ran.filter((l) => l.endsWith(` ${first}`)).length).toBe(3);
    expect(ran.filter((l) => l.endsWith(` ${fork}`))).toEqual([`step c ${fork}`]);
    expect(await statusOf(first)).toBe('failed');
    expect((await admin('opsA', ['tasks', 'get', fork])).stdout).toContain(`retry of ${first}`);
    expect((await admin('opsA', ['tasks', 'get', first])).stdout).toContain(`retried as ${fork}`);
    // Retrying the new task is refused: it completed.
    const refused = await admin('opsA', ['tasks', 'retry', fork]);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining('only those can be retried') });
    expect((await admin('opsA', ['tasks', 'cancel', slowA])).code).toBe(0);
    await waitUntil(async () => (await statusOf(slowA)) === 'cancelled', 'the cancelled task');
    expect((await admin('root', ['tasks', 'purge', quickB, '--yes'])).code).toBe(0);
    expect((await server.api('GET', `/tasks/${quickB}`, 'root')).status).toBe(404);
  });

  it('sums up the tasks in an overview', async () => {
    const overview = await json('root', ['overview', '--windows', '1h', '--stuck', '15m']);
    const byStatus = overview.byStatus as Record<string, number>;
    // The three failed tasks stay failed; the retry's new task completed (the quick job was purged).
    expect(byStatus.failed).toBe(3);
    expect(byStatus.completed).toBe(1);
    expect(byStatus.cancelled).toBe(1);
    expect(overview.byOutcome).toEqual({ completed: 1, tool_error: 0, failed: 3, cancelled: 1 });
    const text = await admin('root', ['overview']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('finished: completed 1, tool_error 0, failed 3, cancelled 1\n');
  });

  it('changes every task a filter matches: a dry run counts, a change asks on a terminal or needs --yes', async () => {
    expect(await json('opsA', ['tasks', 'purge', '--status', 'failed', '--dry-run'])).toEqual({
      dryRun: true,
      matched: 3,
      action: 'purge',
    });
    // On a terminal it asks with the count; anything but y changes nothing (exit 1).
    const command = `${process.execPath} ${BIN} admin tasks purge --status failed --url ${server.proc.url}`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: { ...process.env, DURABLE_MCP_TOKEN: TOKENS.opsA },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    child.stdout.on('data', (c: Buffer) => (screen += c.toString()));
    for (let i = 0; i < 400 && !screen.includes('[y/N]'); i++) await new Promise((r) => setTimeout(r, 25));
    expect(screen).toContain('purge (delete for good) 3 matching task(s)? [y/N]');
    child.stdin.write('n\r');
    expect(await new Promise((r) => child.on('exit', r))).toBe(1);
    expect(screen).toContain('nothing changed');
    expect(await statusOf(failed[0] as string)).toBe('failed');
    const unasked = await admin('root', ['tasks', 'purge', '--status', 'failed']);
    expect(unasked).toMatchObject({ code: 2, stderr: expect.stringContaining('pass --yes') });
    expect((await admin('root', ['tasks', 'cancel', slowA, '--status', 'failed'])).code).toBe(2);
    expect((await admin('root', ['tasks', 'cancel', '--yes'])).code).toBe(2);
    const purged = await admin('opsA', ['tasks', 'purge', '--status', 'failed', '--yes']);
    expect(purged).toMatchObject({ code: 0, stdout: 'purge: 3 of 3 matching task(s)\n' });
    const all = await admin('root', ['tasks', 'cancel', '--tenant', 'A', '--yes']);
    expect(all).toMatchObject({ code: 0, stdout: 'cancel: 1 of 3 matching task(s) (skipped: 2 terminal)\n' });
    await waitUntil(async () => (await statusOf(askingA)) === 'cancelled', 'the cancelled question');
  });

  it('pauses a tool for one tenant, shows it in the flow view, and resumes it: its waiting task then runs', async () => {
    const refused = await admin('opsA', ['pause', 'tool', 'quick_job', '--tenant', 'B']);
    expect(refused).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('cannot pause tool "quick_job"'),
    });
    expect((await admin('root', ['pause', 'tool'])).code).toBe(2);
    expect((await admin('root', ['pause', 'queue', 'quick_job'])).code).toBe(2);
    expect((await admin('root', ['flow', '--max', '0'])).code).toBe(2);
    const paused = await admin('root', ['pause', 'tool', 'quick_job', '--tenant', 'B']);
    expect(paused).toMatchObject({ code: 0, stdout: 'paused tool "quick_job" (tenant B)\n' });

    const held = await server.create('bob', 'quick_job');
    const pausesOf = async () => (await json('root', ['flow'])).pauses as { pausedTasks: number }[];
    await waitUntil(async () => (await pausesOf())[0]?.pausedTasks === 1, 'the task to be paused');
    expect(await statusOf(held)).toBe('working');
    const view = await admin('root', ['flow']);
    expect(view.code).toBe(0);
    expect(view.stdout).toMatch(/^PAUSED +NAME +TENANT +SINCE +TASKS\ntool +quick_job +B +\S+ \S+ +1$/m);
    // Operators of tenant A neither see nor lift tenant B's pause.
    expect(await json('opsA', ['flow'])).toMatchObject({ pauses: [] });
    expect((await admin('opsA', ['resume', 'tool', 'quick_job', '--tenant', 'B'])).code).toBe(1);

    const resumed = await admin('root', ['resume', 'tool', 'quick_job', '--tenant', 'B']);
    expect(resumed).toMatchObject({ code: 0, stdout: expect.stringContaining('1 paused task(s) run again') });
    await waitUntil(async () => (await statusOf(held)) === 'completed', 'the resumed task');
    expect(await json('root', ['flow'])).toMatchObject({ keys: [], pauses: [] });
  });

  it('shows a parent’s child tasks, and a child’s parent', async () => {
    const parent = await server.create('alice', 'parent_job');
    await waitUntil(async () => (await statusOf(parent)) === 'completed', 'the parent');
    const detail = (await server.api('GET', `/tasks/${parent}`, 'root')).body as {
      children?: { id: string; tool: string; status: string }[];
    };
    const child = detail.children?.[0]?.id ?? '';
    expect(detail.children).toEqual([{ id: child, tool: 'quick_job', status: 'completed' }]);
    expect((await admin('opsA', ['tasks', 'get', parent])).stdout).toContain(
      `\n  child tasks:\n    ${child} quick_job: completed\n`,
    );
    expect((await admin('opsA', ['tasks', 'get', child])).stdout).toContain(`\n  child task of ${parent}\n`);
  });
});
