// Crash, restart and multi-process tests of durable tasks on one SQLite file, with real server processes.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpClient, type McpHttpClient } from '../../src/advanced.js';
import { startServe, type ServeProcess } from '../support/cli.js';
import { openSse } from '../support/server.js';

const TOOLS = fileURLToPath(new URL('../fixtures/tools/durable-tools.mjs', import.meta.url));
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} }, elicitation: {} };

const procs: ServeProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill('SIGKILL');
      await p.exited;
    }
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

interface Env {
  dir: string;
  db: string;
  logFile: string;
  start(extra?: string[]): Promise<{ proc: ServeProcess; client: McpHttpClient }>;
  lines(): string[];
}

function env(): Env {
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-dur-'));
  dirs.push(dir);
  const logFile = join(dir, 'runs.log');
  writeFileSync(logFile, '');
  const db = join(dir, 'tasks.db');
  return {
    dir,
    db,
    logFile,
    async start(extra = []) {
      const proc = await startServe(
        ['--port', '0', '--store', db, '--tools', TOOLS, '--lease-ms', '600', ...extra],
        15_000,
        { DURABLE_MCP_TEST_LOG: logFile },
      );
      procs.push(proc);
      return { proc, client: createHttpClient({ url: proc.url, capabilities: TASKS }) };
    },
    lines: () => readFileSync(logFile, 'utf8').split('\n').filter(Boolean),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 15_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error('timed out waiting');
    await sleep(50);
  }
}

const create = async (
  client: McpHttpClient,
  name: string,
  args: Record<string, unknown>,
): Promise<string> => {
  const r = await client.call('tools/call', { name, arguments: args });
  expect(r.resultType).toBe('task');
  return String(r.taskId);
};
const getTask = (client: McpHttpClient, taskId: string) => client.call('tasks/get', { taskId });
const untilStatus = (client: McpHttpClient, taskId: string, statuses: string[]) =>
  waitFor(async () => {
    const t = await getTask(client, taskId);
    return statuses.includes(String(t.status)) ? t : undefined;
  });
const count = (lines: string[], prefix: string) => lines.filter((l) => l.startsWith(`${prefix} `)).length;

describe('durable tasks across processes', () => {
  it('a worker killed with SIGKILL mid-step: the task completes once on the next server, finished steps are not re-run', async () => {
    const e = env();
    const a = await e.start();
    const id = await create(a.client, 'stepped_job', { id: 'k1', ms: 1500 });
    await waitFor(() => (e.lines().some((l) => l.startsWith('step-b-start k1')) ? true : undefined));
    a.proc.child.kill('SIGKILL');
    await a.proc.exited;
    const b = await e.start();
    const done = await untilStatus(b.client, id, ['completed', 'failed', 'cancelled']);
    expect(done.status).toBe('completed');
    expect(JSON.stringify(done.result)).toContain('answer 42');
    const lines = e.lines();
    expect(count(lines, 'step-a')).toBe(1); // memoized: never re-run
    expect(count(lines, 'step-b-start')).toBe(2); // interrupted, so run again
    expect(count(lines, 'step-b-end')).toBe(1);
    const pids = new Set(lines.filter((l) => l.startsWith('step-b-start')).map((l) => l.split(' ')[2]));
    expect(pids.size).toBe(2);
  });

  it('a task handed back to a client without the extension survives a SIGKILL between its polls', async () => {
    const e = env();
    const a = await e.start(['--fallback-budget-ms', '200']);
    const plain = createHttpClient({ url: a.proc.url, capabilities: {} });
    const handed = await plain.call('tools/call', {
      name: 'background_job',
      arguments: { id: 'h1', ms: 1500 },
    });
    const handle = handed.structuredContent as { taskId: string; status: string };
    expect(handle.status).toBe('working');
    await waitFor(() => (e.lines().some((l) => l.startsWith('step-b-start h1')) ? true : undefined));
    a.proc.child.kill('SIGKILL');
    await a.proc.exited;
    const b = await e.start(['--fallback-budget-ms', '2000']);
    const again = createHttpClient({ url: b.proc.url, capabilities: {} });
    const done = await waitFor(async () => {
      const status = await again.call('tools/call', {
        name: 'task_status',
        arguments: { taskId: handle.taskId },
      });
      return (status.structuredContent as { status: string }).status === 'completed' ? status : undefined;
    });
    expect(JSON.stringify(done.content)).toContain('answer 42');
    const lines = e.lines();
    expect(count(lines, 'step-a h1')).toBe(1); // memoized before the crash: never re-run
    expect(count(lines, 'step-b-end h1')).toBe(1);
  });

  it('a sleeping task survives a SIGKILL of its process and is woken by another, not before its time', async () => {
    const e = env();
    const a = await e.start();
    const id = await create(a.client, 'nap_job', { id: 'n1', ms: 2_000 });
    await waitFor(async () => {
      const t = await getTask(a.client, id);
      return String(t.statusMessage).startsWith('Sleeping until') ? t : undefined;
    });
    a.proc.child.kill('SIGKILL');
    await a.proc.exited;
    const b = await e.start();
    const done = await untilStatus(b.client, id, ['completed', 'failed', 'cancelled']);
    expect(done.status).toBe('completed');
    expect(JSON.stringify(done.result)).toContain('rested n1');
    const lines = e.lines();
    expect(count(lines, 'before')).toBe(1);
    const woke = lines.filter((l) => l.startsWith('woke n1'));
    expect(woke).toHaveLength(1);
    const [, , late, pid] = (woke[0] as string).split(' ');
    expect(Number(late)).toBeGreaterThanOrEqual(0); // never before the wake time
    expect(pid).toBe(String(b.proc.child.pid));
  });

  it('a failing step is retried with backoff, then the task completes with the error as a tool error', async () => {
    const e = env();
    const a = await e.start();
    const id = await create(a.client, 'flaky_job', { id: 'f' });
    const done = await untilStatus(a.client, id, ['completed', 'failed', 'cancelled']);
    expect(done.status).toBe('completed');
    expect(done.result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'fetch failed hard (attempt 3)' }],
    });
    expect(
      e
        .lines()
        .filter((l) => l.startsWith('attempt f'))
        .map((l) => l.split(' ')[2]),
    ).toEqual(['1', '2', '3']);
  });

  it('restart recovery: every task is still there with an identical snapshot; running ones are replayed or failed by policy', async () => {
    const e = env();
    const a = await e.start();
    const doneId = await create(a.client, 'tracked_job', { id: 'd1', ms: 10 });
    const askId = await create(a.client, 'ask_job', {});
    const replayId = await create(a.client, 'stepped_job', { id: 'r1', ms: 1500 });
    const fragileId = await create(a.client, 'fragile_job', { id: 'f1', ms: 1500 });
    const done = await untilStatus(a.client, doneId, ['completed']);
    const asking = await untilStatus(a.client, askId, ['input_required']);
    await waitFor(() => {
      const l = e.lines();
      return l.some((x) => x.startsWith('step-b-start r1')) && l.some((x) => x.startsWith('step-b-start f1'))
        ? true
        : undefined;
    });
    a.proc.child.kill('SIGKILL');
    await a.proc.exited;

    const b = await e.start();
    const strip = (t: Record<string, unknown>) => JSON.stringify({ ...t, _meta: undefined });
    expect(strip(await getTask(b.client, doneId))).toBe(strip(done));
    expect(strip(await getTask(b.client, askId))).toBe(strip(asking));
    const replayed = await untilStatus(b.client, replayId, ['completed', 'failed']);
    expect(replayed.status).toBe('completed');
    const fragile = await untilStatus(b.client, fragileId, ['completed', 'failed']);
    expect(fragile.status).toBe('failed');
    expect(fragile.error).toMatchObject({
      code: -32603,
      message: 'server restarted while the task was running',
    });
    expect(count(e.lines(), 'step-a')).toBe(2); // once per task, never again
    await b.client.call('tasks/update', {
      taskId: askId,
      inputResponses: { ok: { action: 'accept', content: { ok: true } } },
    });
    expect((await untilStatus(b.client, askId, ['completed'])).result).toBeDefined();
  });

  it('two server processes on one SQLite file never run the same task at the same time', async () => {
    const e = env();
    const a = await e.start(['--concurrency', '4']);
    const b = await e.start(['--concurrency', '4']);
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const client = i % 2 === 0 ? a.client : b.client;
      ids.push(await create(client, 'tracked_job', { id: `t${i}`, ms: 40 }));
    }
    for (const id of ids) await untilStatus(a.client, id, ['completed']);
    const lines = e.lines();
    for (let i = 0; i < 30; i++) {
      expect(count(lines, `start t${i}`.split(' ')[0] as string) >= 0).toBe(true);
      const starts = lines.filter((l) => l.startsWith(`start t${i} `));
      const ends = lines.filter((l) => l.startsWith(`end t${i} `));
      expect(starts).toHaveLength(1);
      expect(ends).toHaveLength(1);
    }
    const pids = new Set(lines.map((l) => l.split(' ')[2]));
    expect(pids.size).toBe(2); // both processes did work
  });

  it('a subscriber on one process sees the transitions of a task another process runs (shared file)', async () => {
    const e = env();
    const a = await e.start(['--concurrency', '2']);
    const b = await e.start(['--concurrency', '0']);
    const id = await create(a.client, 'tracked_job', { id: 'x1', ms: 600 });
    const stream = await openSse(
      b.proc.url,
      {
        jsonrpc: '2.0',
        id: 'watch',
        method: 'subscriptions/listen',
        params: {
          notifications: { taskIds: [id] },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': TASKS,
          },
        },
      },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' },
    );
    const ack = (await stream.next()) as { params: { notifications: { taskIds: string[] } } };
    expect(ack.params.notifications.taskIds).toEqual([id]);
    let status: unknown;
    for (let i = 0; i < 20 && status !== 'completed'; i++) {
      const m = (await stream.next(3_000)) as { params?: { status?: string } } | undefined;
      status = m?.params?.status;
    }
    expect(status).toBe('completed');
    stream.close();
    expect(
      e
        .lines()
        .filter((l) => l.startsWith('end x1'))
        .every((l) => l.endsWith(String(a.proc.child.pid))),
    ).toBe(true);
  });
});
