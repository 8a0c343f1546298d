// `durable-mcp backup DEST` copies a SQLite store while a server runs tasks on it; the server is then killed, the
// copy restored to a new path and served: the finished task is there, the tasks that were running resume from their
// saved steps and complete, and the one waiting for input takes its answer.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, killedAfterEach, type ServeProcess, startServe } from '../support/cli.js';
import { rpcResult, startTask, waitForTask } from '../support/task-calls.js';

const TOOLS = fileURLToPath(new URL('../fixtures/tools/replica-tools.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-backup-'));
const runLog = join(dir, 'runs.log');
const env = { DURABLE_MCP_TEST_LOG: runLog };
const procs = killedAfterEach();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = (...args: string[]) =>
  spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: process.env });
const logLines = (): string[] => (existsSync(runLog) ? readFileSync(runLog, 'utf8').trim().split('\n') : []);
/** How many times a step's function started for a task, in any process. */
const stepStarts = (step: string, taskId: string): number =>
  logLines().filter((l) => l.startsWith(`step ${step} ${taskId} `)).length;

async function until(what: string, ok: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const serve = async (file: string): Promise<ServeProcess> => {
  const server = await startServe(
    ['--port', '0', '--store', file, '--tools', TOOLS, '--lease-ms', '2000'],
    30_000,
    env,
  );
  procs.push(server);
  return server;
};

describe('durable-mcp backup', () => {
  it('copies a SQLite store with tasks in flight; served from the copy, they resume and complete', async () => {
    const store = join(dir, 'tasks.db');
    const server = await serve(store);
    const done = await startTask(server.url, 'memo_job', { ms: 10 });
    await waitForTask(server.url, done, ['completed']);
    const asking = await startTask(server.url, 'ask_memo_job', { ms: 10 });
    // Still running when the copy is taken and when the server is killed; done soon after they resume.
    const running = await Promise.all([1, 2, 3].map(() => startTask(server.url, 'memo_job', { ms: 8_000 })));
    await waitForTask(server.url, asking, ['input_required']);
    await until('the running tasks to save their first step', () =>
      running.every((id) => logLines().some((l) => l.startsWith(`step-end a ${id} `))),
    );

    const copy = join(dir, 'backup.db');
    const backedUp = cli('backup', '--store', store, copy);
    expect(backedUp.stderr).toBe('');
    expect(backedUp.status).toBe(0);
    expect(backedUp.stdout.trim()).toMatch(/backed up to .*backup\.db \(5 tasks, migration \d+\)$/);
    expect(statSync(copy).mode & 0o777).toBe(0o600);
    // A second copy never overwrites the first.
    expect(cli('backup', '--store', store, copy).status).toBe(2);
    server.child.kill('SIGKILL');
    await server.exited;
    // The copy holds the tasks as they were: one finished, three running, one waiting for its answer.
    const held = new Database(copy, { readonly: true });
    const statuses = held.prepare('SELECT id, status FROM tasks').all() as { id: string; status: string }[];
    held.close();
    const statusOf = (id: string) => statuses.find((t) => t.id === id)?.status;
    expect([done, asking, ...running].map(statusOf)).toEqual([
      'completed',
      'input_required',
      'working',
      'working',
      'working',
    ]);

    // Restored to a new path and served: the running tasks resume once the dead process's leases expire, without
    // running their saved first step again, and complete; the waiting one takes its answer.
    const restored = join(dir, 'restored', 'tasks.db');
    mkdirSync(join(dir, 'restored'));
    copyFileSync(copy, restored);
    const again = await serve(restored);
    expect((await rpcResult(again.url, 'tasks/get', { taskId: done }, done)).status).toBe('completed');
    const answer = { taskId: asking, inputResponses: { go: { action: 'accept', content: { go: true } } } };
    await rpcResult(again.url, 'tasks/update', answer, asking);
    for (const id of [asking, ...running])
      expect((await waitForTask(again.url, id, ['completed', 'failed'], 60_000)).status).toBe('completed');
    for (const id of running) expect(stepStarts('a', id)).toBe(1);
  }, 90_000);

  it('refuses a PostgreSQL store, a missing file and a second destination', () => {
    const pgStore = cli('backup', '--store', 'postgres://u@127.0.0.1:1/db', join(dir, 'x.db'));
    expect(pgStore.status).toBe(2);
    expect(pgStore.stderr).toContain('pg_dump');
    expect(cli('backup', '--store', join(dir, 'missing.db'), join(dir, 'y.db')).status).toBe(2);
    expect(cli('backup', '--store', join(dir, 'missing.db')).status).toBe(2);
  });
});
