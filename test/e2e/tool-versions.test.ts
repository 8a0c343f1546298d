// Tool versions across processes on one store (SQLite file, PostgreSQL schema): each task records the version of the
// code that created it, and each process runs only the tasks its code replays, so that during a rolling deploy old
// tasks drain on old processes and new ones run on new processes. Tasks no process here can replay are reported;
// tasks of a tool no process offers any more fail clearly, but only after the drain period.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createSqliteTaskStore } from '../../src/advanced.js';
import { defineTool, textResult, type ToolDefinition } from '../../src/index.js';
import type { BuiltInTaskStore } from '../../src/stores/built-in.js';
import type { OutOfScopeTasks } from '../../src/tasks/store.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';
import { usePostgresStores } from '../support/postgres-stores.js';
import { withPostgres } from '../support/postgres.js';
import { buildRequest, lastMessage, openSse, rpc as post } from '../support/server.js';

type Json = Record<string, unknown>;
const CAPS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

const reportTool = (process: string, version: string, compatibleVersions?: string[]) =>
  defineTool({
    name: 'report',
    version,
    ...(compatibleVersions === undefined ? {} : { compatibleVersions }),
    task: { support: 'optional' },
    handler: async (_args, ctx) => {
      const by = await ctx.step('write', () => `${process} ran code ${version}`);
      return textResult(by);
    },
  });

/** Version 1 of `report`, whose step waits for the test to let it finish. */
const gate: { open?: () => void } = {};
const openGate = (): void => gate.open?.();
const gatedReport = defineTool({
  name: 'report',
  version: '1',
  task: { support: 'optional' },
  handler: async (_args, ctx) => {
    await ctx.step('write', () => new Promise<void>((resolve) => (gate.open = resolve)));
    return textResult('written by a server running code 1');
  },
});

const WAITING = 'Waiting for a server running version 1 of report to continue this task.';

const retired = defineTool({
  name: 'retired',
  task: { support: 'optional' },
  handler: () => textResult('never runs here'),
});

async function call(server: DurableTestServer, name: string): Promise<string> {
  const body = lastMessage(await post(server.url, 'tools/call', { name, arguments: {} }, { caps: CAPS }));
  return String((body.result as Json).taskId);
}

async function task(server: DurableTestServer, taskId: string): Promise<Json> {
  const body = lastMessage(await post(server.url, 'tasks/get', { taskId }, { caps: CAPS }));
  return body.result as Json;
}

async function ended(server: DurableTestServer, taskId: string, ms = 10_000): Promise<Json> {
  const deadline = Date.now() + ms;
  for (;;) {
    const t = await task(server, taskId);
    if (t.status !== 'working' && t.status !== 'input_required') return t;
    if (Date.now() > deadline) throw new Error(`task ${taskId} stayed ${JSON.stringify(t)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A subscription to a task's notifications/tasks, with the status messages pushed so far. */
async function listen(server: DurableTestServer, taskId: string) {
  const { body, headers } = buildRequest(
    'subscriptions/listen',
    { notifications: { taskIds: [taskId] } },
    {
      caps: CAPS,
    },
  );
  const stream = await openSse(server.url, body, headers);
  const seen: string[] = [];
  let reading = true;
  void (async () => {
    // Bounded by the test: the stream closes when it ends.
    while (reading && !stream.ended) {
      const msg = (await stream.next(200)) as { method?: string; params?: Json } | undefined;
      if (msg?.method === 'notifications/tasks') seen.push(String(msg.params?.statusMessage));
    }
  })();
  return {
    messages: () => seen,
    close: () => {
      reading = false;
      stream.close();
    },
  };
}

const text = (t: Json): string => ((t.result as Json).content as { text: string }[])[0]?.text ?? '';

function defineVersionSuite(name: string, openStore: () => BuiltInTaskStore): void {
  describe(`tool versions on one store (${name})`, () => {
    const servers: DurableTestServer[] = [];
    const serve = async (
      tools: ToolDefinition<never>[],
      worker: Parameters<typeof startDurableServer>[0]['worker'] = {},
      tasks: Parameters<typeof startDurableServer>[0]['tasks'] = {},
    ): Promise<DurableTestServer> => {
      const server = await startDurableServer({
        toolSets: [{ tools }],
        store: openStore,
        worker: worker === false ? false : { pollMs: 20, sweepMs: 50, ...worker },
        tasks: { tasksGetRate: false, defaultPollIntervalMs: 100, ...tasks },
      });
      servers.push(server);
      return server;
    };
    afterEach(async () => {
      for (const s of servers.splice(0)) await s.close();
    });

    it('each process runs only the tasks its code replays', async () => {
      const old = await serve([reportTool('A', '1')]);
      const next = await serve([reportTool('B', '2')]);
      const oldTasks = await Promise.all(Array.from({ length: 6 }, () => call(old, 'report')));
      const newTasks = await Promise.all(Array.from({ length: 6 }, () => call(next, 'report')));
      for (const id of oldTasks) expect(text(await ended(next, id))).toBe('A ran code 1');
      for (const id of newTasks) expect(text(await ended(old, id))).toBe('B ran code 2');
    });

    it('a process that declares an earlier version compatible runs its tasks too', async () => {
      const old = await serve([reportTool('A', '1')], false);
      const waiting = await call(old, 'report');
      await serve([reportTool('C', '3', ['1'])]);
      expect(text(await ended(old, waiting))).toBe('C ran code 3');
    });

    it('reports tasks no process here can replay, and leaves them waiting', async () => {
      const seen: (readonly OutOfScopeTasks[])[] = [];
      const old = await serve([reportTool('A', '1')], false);
      const stranded = await call(old, 'report');
      const current = await serve([reportTool('B', '2')], {
        observer: { outOfScope: (waiting) => seen.push(waiting) },
      });
      await expect.poll(() => seen.length, { timeout: 5_000 }).toBeGreaterThan(0);
      expect(seen[0]).toEqual([{ tool: 'report', version: '1', count: 1 }]);
      expect((await task(current, stranded)).status).toBe('working');
    });

    it('tells the owner that a task waits for a server running its version, until one runs it', async () => {
      gate.open = undefined;
      const old = await serve([gatedReport], false);
      const waiting = await call(old, 'report');
      const stream = await listen(old, waiting);
      const current = await serve([reportTool('B', '2')], { versionWaitMs: 200 });
      await expect
        .poll(async () => (await task(current, waiting)).statusMessage, { timeout: 5_000 })
        .toBe(WAITING);
      expect((await task(old, waiting)).status).toBe('working');
      await expect.poll(() => stream.messages().includes(WAITING), { timeout: 5_000 }).toBe(true);
      // A server that runs version 1 arrives: once it runs the task, the task no longer says it waits, to anyone.
      await serve([gatedReport]);
      await expect.poll(() => gate.open !== undefined, { timeout: 5_000 }).toBe(true);
      expect((await task(old, waiting)).statusMessage).toBe('The task is now in progress.');
      await expect
        .poll(() => stream.messages().at(-1), { timeout: 5_000 })
        .toBe('The task is now in progress.');
      openGate();
      expect(text(await ended(current, waiting))).toBe('written by a server running code 1');
      stream.close();
    });

    it('hands a task that waits for its version back to a client without the extension, saying so', async () => {
      const old = await serve([reportTool('A', '1')], false, { fallback: { budgetMs: 1_500 } });
      await serve([reportTool('B', '2')], { versionWaitMs: 200 });
      const body = lastMessage(await post(old.url, 'tools/call', { name: 'report', arguments: {} }));
      const handed = body.result as Json;
      expect((handed.structuredContent as Json).statusMessage).toBe(WAITING);
      expect(JSON.stringify(handed.content)).toContain(WAITING);
    });

    it('fails the tasks of a tool no process offers any more, once the drain period has passed', async () => {
      const before = await serve([retired], false);
      // Before the call: the drain period cannot have begun before the task exists.
      const started = Date.now();
      const orphan = await call(before, 'retired');
      const after = await serve([reportTool('B', '2')], { removedToolDrainMs: 600 });
      const done = await ended(after, orphan);
      expect(Date.now() - started).toBeGreaterThanOrEqual(400);
      expect(done.status).toBe('failed');
      expect(done.statusMessage).toContain('The tool retired is no longer available');
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-versions-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let file = 0;
let current = '';
defineVersionSuite('one SQLite file', () => createSqliteTaskStore({ path: current }));
afterEach(() => {
  file += 1;
  current = join(dir, `tasks-${file}.db`);
});
current = join(dir, 'tasks-0.db');

await withPostgres('tool versions (PostgreSQL)', () => {
  const pgStores = usePostgresStores('dmcp_versions');
  let schema = pgStores.freshSchema();
  afterEach(() => {
    schema = pgStores.freshSchema();
  });
  defineVersionSuite('one PostgreSQL schema', () => pgStores.open({ schema }));
});
