// The operator API and `durable-mcp admin tasks list --all` over 10,000 stored tasks, on SQLite and on PostgreSQL:
// every task exactly once, newest first, across pages; an operator of one tenant pages through exactly its tasks.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresBackend } from '../../src/postgres.js';
import { createSqliteTaskStore } from '../../src/advanced.js';
import type { TaskStore } from '../../src/tasks/store.js';
import type { NewTask } from '../../src/tasks/task.js';
import { startAdminServer, TOKENS, type AdminServer, type Who } from '../support/admin-api.js';
import { BIN } from '../support/cli.js';
import { dropSchema, TEST_POSTGRES_URL, withPostgres } from '../support/postgres.js';
import { workerTask } from '../support/tasks.js';

const TASKS = 10_000;
const T0 = Date.UTC(2026, 0, 1);

/** 10,000 tasks of a tool no server runs (they stay as stored), every other one in tenant B; ids newest first. */
async function fill(store: TaskStore): Promise<{ all: string[]; tenantA: string[] }> {
  const tasks: NewTask[] = Array.from({ length: TASKS }, (_, i) =>
    workerTask(T0 + i, {
      owner: i % 2 === 0 ? { tenant: 'A', principal: 'alice' } : { tenant: 'B', principal: 'bob' },
      tool: 'bulk_job',
    }),
  );
  for (let i = 0; i < TASKS; i += 500) await Promise.all(tasks.slice(i, i + 500).map((t) => store.create(t)));
  const newestFirst = [...tasks].reverse();
  return {
    all: newestFirst.map((t) => t.id),
    tenantA: newestFirst.filter((t) => t.owner.tenant === 'A').map((t) => t.id),
  };
}

/** Every page of `GET /tasks?tool=bulk_job` as `who`, following the cursor. */
async function walk(server: AdminServer, who: Who, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 1_000; pages += 1) {
    const query = new URLSearchParams({ tool: 'bulk_job', limit: String(limit) });
    if (cursor !== undefined) query.set('cursor', cursor);
    const page = await server.api('GET', `/tasks?${query}`, who);
    expect(page.status).toBe(200);
    ids.push(...(page.body.items as { id: string }[]).map((t) => t.id));
    cursor = page.body.next as string | undefined;
    if (cursor === undefined) return ids;
  }
  throw new Error('more than 1,000 pages');
}

function cliList(server: AdminServer, who: Who): Promise<string[]> {
  const args = [
    'admin',
    'tasks',
    'list',
    '--tool',
    'bulk_job',
    '--all',
    '--max',
    '20000',
    '--output',
    'json',
  ];
  const child = spawn(process.execPath, [BIN, ...args, '--url', server.proc.url], {
    env: { ...process.env, DURABLE_MCP_TOKEN: TOKENS[who] },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  return new Promise((resolve, reject) =>
    child.on('exit', (code) =>
      code === 0
        ? resolve((JSON.parse(out) as { items: { id: string }[] }).items.map((t) => t.id))
        : reject(new Error(`admin tasks list exited ${code}: ${err}`)),
    ),
  );
}

function defineSuite(
  name: string,
  open: () => Promise<{ store: TaskStore; args: (dir: string) => string[] }>,
) {
  describe(name, () => {
    let server: AdminServer;
    let ids: { all: string[]; tenantA: string[] };
    beforeAll(async () => {
      const { store, args } = await open();
      ids = await fill(store);
      await store.close();
      server = await startAdminServer(args);
    }, 120_000);
    afterAll(async () => {
      await server?.close();
    });

    it('pages through every task once, newest first, through the API and the CLI', async () => {
      expect(await walk(server, 'root', 500)).toEqual(ids.all);
      expect(await walk(server, 'opsA', 333)).toEqual(ids.tenantA);
      expect(await cliList(server, 'root')).toEqual(ids.all);
    }, 120_000);
  });
}

const sqliteFile = join(tmpdir(), `durable-mcp-admin-paging-${randomBytes(4).toString('hex')}.db`);
afterAll(() => {
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${sqliteFile}${suffix}`, { force: true });
});
defineSuite('10,000 tasks on SQLite', async () => ({
  store: createSqliteTaskStore({ path: sqliteFile }),
  args: () => ['--store', sqliteFile],
}));

const SCHEMA = `dmcp_admin_paging_${randomBytes(5).toString('hex')}`;
await withPostgres('10,000 tasks on PostgreSQL', () => {
  defineSuite('10,000 tasks on PostgreSQL', async () => ({
    store: (await createPostgresBackend({ connectionString: TEST_POSTGRES_URL, schema: SCHEMA })).tasks,
    args: () => ['--store', TEST_POSTGRES_URL, '--pg-schema', SCHEMA],
  }));
  afterAll(async () => {
    await dropSchema(SCHEMA);
  });
});
