// Child tasks (ctx.callTool) on both stores, through createDurableMcp: a parent with 20 children whose process froze
// midway (after starting 10 of them) completes once on another process with every child's result, each child task
// created and run once; cancelling a parent cancels its children but not detached ones; a child refused by a quota
// fails the call at once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ChildTaskRefusedError,
  createDurableMcp,
  defineTool,
  textResult,
  type DurableMcp,
  type TaskStore,
} from '../src/index.js';
import { createSqliteTaskStore } from '../src/stores/sqlite/task-store.js';
import { createPostgresTaskStore } from '../src/stores/postgres/task-store.js';
import {
  LATEST_PROTOCOL_VERSION,
  META_CLIENT_CAPABILITIES,
  META_PROTOCOL_VERSION,
  TASKS_EXTENSION,
} from '../src/wire/meta-keys.js';
import type { JsonObject } from '../src/json.js';
import { TEST_POSTGRES_URL, withPostgres } from './support/postgres.js';

const OWNER = { tenant: 'acme', principal: 'alice' };
const CHILDREN = 20;

/** tools/call and tasks/* as a client with the tasks extension. */
function caller(mcp: DurableMcp) {
  let id = 1;
  return async (method: string, params: JsonObject): Promise<JsonObject> => {
    const meta = {
      [META_PROTOCOL_VERSION]: LATEST_PROTOCOL_VERSION,
      [META_CLIENT_CAPABILITIES]: { extensions: { [TASKS_EXTENSION]: {} } },
    };
    const outcome = await mcp.server.dispatch({
      request: { kind: 'request', id: id++, method, params: { ...params, _meta: meta } },
      auth: OWNER,
      signal: new AbortController().signal,
      header: undefined,
      emit: () => undefined,
    });
    if (!outcome.ok) throw outcome.error;
    return outcome.result;
  };
}

/** Polls tasks/get until the task is in a terminal status (bounded). */
async function settled(call: ReturnType<typeof caller>, taskId: string, ms = 30_000): Promise<JsonObject> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const got = await call('tasks/get', { taskId });
    if (['completed', 'failed', 'cancelled'].includes(String(got.status))) return got;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`task ${taskId} did not finish within ${ms} ms`);
}

const textOf = (result: JsonObject): string =>
  ((result.content as { text: string }[])[0] as { text: string }).text;

function fanOut(runs: Map<number, number>) {
  const leaf = defineTool({
    name: 'leaf',
    inputSchema: { type: 'object', properties: { i: { type: 'number' } }, required: ['i'] },
    task: { support: 'optional' },
    handler: async (args: { i: number }) => {
      runs.set(args.i, (runs.get(args.i) ?? 0) + 1);
      return textResult(String(args.i * 10));
    },
  });
  const fan = defineTool({
    name: 'fan',
    task: { support: 'optional' },
    handler: async (_args, ctx) => {
      const results = await Promise.all(
        Array.from({ length: CHILDREN }, (_, i) => ctx.callTool('leaf', { i }, { name: `leaf-${i}` })),
      );
      return textResult(results.map((r) => textOf(r as unknown as JsonObject)).join(','));
    },
  });
  const wait = defineTool({
    name: 'wait',
    task: { support: 'optional' },
    handler: async (_args, ctx) => {
      await ctx.sleep('long', 3_600_000);
      return textResult('woke');
    },
  });
  const parentOfWaits = defineTool({
    name: 'parent_of_waits',
    task: { support: 'optional' },
    handler: async (_args, ctx) => {
      await Promise.all([
        ctx.callTool('wait', {}, { name: 'attached' }),
        ctx.callTool('wait', {}, { name: 'detached', detached: true }),
      ]);
      return textResult('done');
    },
  });
  const tooMany = defineTool({
    name: 'too_many',
    task: { support: 'optional' },
    handler: async (_args, ctx) => {
      try {
        await ctx.callTool('leaf', { i: 1 });
        return textResult('created');
      } catch (err) {
        if (err instanceof ChildTaskRefusedError)
          return textResult(`refused: ${String((err.error.data as { quota?: string }).quota)}`);
        throw err;
      }
    },
  });
  return [{ tools: [leaf, fan, wait, parentOfWaits, tooMany] }];
}

/**
 * The store of a process that froze (as if killed) after creating `n` child tasks: every later call of it hangs
 * until `thaw()`, which rejects them all (the process is gone; nothing it does after counts).
 */
function freezingAfter(store: TaskStore, n: number): { store: TaskStore; thaw: () => void } {
  let children = 0;
  let frozen = false;
  let gone = false;
  const waiting: (() => void)[] = [];
  const hang = (): Promise<never> =>
    gone
      ? Promise.reject(new Error('the process is gone'))
      : new Promise((_, reject) => waiting.push(() => reject(new Error('the process is gone'))));
  const wrapped = new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function' || prop === 'close') return value;
      return (...args: unknown[]) => {
        if (frozen) return hang();
        if (prop === 'create' && (args[0] as { parent?: unknown }).parent !== undefined && ++children > n) {
          frozen = true;
          return hang();
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return {
    store: wrapped,
    thaw: () => {
      gone = true;
      for (const reject of waiting.splice(0)) reject();
    },
  };
}

interface Storage {
  /** A new store on the test's storage (each as another process would open it). */
  open(): TaskStore;
  /** The child tasks of `parent`, as the storage keeps them. */
  childCount(parent: string): Promise<number>;
  cleanup(): Promise<void>;
}

function childTaskSuite(name: string, storage: () => Promise<Storage>): void {
  describe(`child tasks on ${name}`, { timeout: 90_000 }, () => {
    let current: Storage | undefined;
    const open: DurableMcp[] = [];
    afterEach(async () => {
      for (const mcp of open.splice(0)) await mcp.close(0).catch(() => undefined);
      await current?.cleanup();
    });
    const start = (store: TaskStore, runs: Map<number, number>, tasks = {}): DurableMcp => {
      const mcp = createDurableMcp({
        toolSets: fanOut(runs),
        store,
        tasks,
        worker: { concurrency: 8, leaseMs: 600, pollMs: 200, sweepMs: 200 },
      });
      open.push(mcp);
      return mcp;
    };

    it('a parent of 20 children, frozen midway, completes once with every child’s result; each child ran once', async () => {
      current = await storage();
      const runs = new Map<number, number>();
      const frozen = freezingAfter(current.open(), CHILDREN / 2);
      // The first process runs only the parent (one slot): it freezes after starting half of its children.
      const first = createDurableMcp({
        toolSets: fanOut(runs),
        store: frozen.store,
        worker: { concurrency: 1, leaseMs: 600, pollMs: 200 },
      });
      const call = caller(first);
      const { taskId } = (await call('tools/call', { name: 'fan', arguments: {} })) as { taskId: string };
      for (let i = 0; i < 200 && (await current.childCount(taskId)) < CHILDREN / 2; i++)
        await new Promise((r) => setTimeout(r, 25));
      expect(await current.childCount(taskId)).toBe(CHILDREN / 2);
      // Another process takes over once the frozen run's lease lapses.
      const second = start(current.open(), runs);
      const done = await settled(caller(second), String(taskId));
      frozen.thaw();
      await first.close(0).catch(() => undefined);
      expect(done.status).toBe('completed');
      const expected = Array.from({ length: CHILDREN }, (_, i) => String(i * 10)).join(',');
      expect(textOf(done.result as JsonObject)).toBe(expected);
      expect(await current.childCount(taskId)).toBe(CHILDREN);
      expect([...runs.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: CHILDREN }, (_, i) => i));
      expect([...runs.values()].every((n) => n === 1)).toBe(true);
    });

    it('cancelling a parent cancels its child, not its detached one', async () => {
      current = await storage();
      const mcp = start(current.open(), new Map());
      const call = caller(mcp);
      const { taskId } = (await call('tools/call', { name: 'parent_of_waits', arguments: {} })) as {
        taskId: string;
      };
      let children: { taskId: string; status: string }[] = [];
      for (let i = 0; i < 400 && children.length < 2; i++) {
        const got = await call('tasks/get', { taskId });
        children = ((got._meta ?? {}) as JsonObject)['dev.durable-mcp/childTasks'] as typeof children;
        children ??= [];
        if (children.length < 2) await new Promise((r) => setTimeout(r, 25));
      }
      expect(children).toHaveLength(2);
      await call('tasks/cancel', { taskId });
      expect((await settled(call, taskId)).status).toBe('cancelled');
      // A child running when its parent was cancelled stops at its next heartbeat: wait for it (bounded).
      let statuses: unknown[][] = [];
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        statuses = await Promise.all(
          children.map(async (c) => [c.taskId, (await call('tasks/get', { taskId: c.taskId })).status]),
        );
        if (statuses.some(([, s]) => s === 'cancelled')) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(statuses.filter(([, s]) => s === 'cancelled')).toHaveLength(1);
      // The detached child sleeps on.
      expect(statuses.filter(([, s]) => s === 'working')).toHaveLength(1);
    });

    it('a child refused by a quota fails the call at once', async () => {
      current = await storage();
      // The parent is the owner's one unfinished task allowed: its child is over the quota.
      const mcp = start(current.open(), new Map(), { maxActiveTasksPerPrincipal: 1 });
      const call = caller(mcp);
      const { taskId } = (await call('tools/call', { name: 'too_many', arguments: {} })) as {
        taskId: string;
      };
      const done = await settled(call, taskId, 10_000);
      expect(done.status).toBe('completed');
      expect(textOf(done.result as JsonObject)).toBe('refused: active');
    });
  });
}

childTaskSuite('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-children-'));
  const path = join(dir, 'tasks.db');
  const db = createSqliteTaskStore({ path });
  return {
    open: () => createSqliteTaskStore({ path }),
    childCount: async (parent) =>
      Number(
        db.db.prepare(`SELECT count(*) AS n FROM tasks WHERE parent_id = ?`).pluck().get(parent) as number,
      ),
    cleanup: async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

await withPostgres('child tasks on PostgreSQL', () => {
  childTaskSuite('PostgreSQL', async () => {
    const schema = `dmcp_children_${Math.random().toString(16).slice(2, 10)}`;
    const opened: TaskStore[] = [];
    const admin = createPostgresTaskStore({ connectionString: TEST_POSTGRES_URL, schema, poolSize: 2 });
    const pg = await import('pg');
    const pool = new pg.default.Pool({ connectionString: TEST_POSTGRES_URL, max: 1 });
    return {
      open: () => {
        const store = createPostgresTaskStore({ connectionString: TEST_POSTGRES_URL, schema, poolSize: 4 });
        opened.push(store);
        return store;
      },
      childCount: async (parent) => {
        // The schema exists once a store has migrated it (the admin store's first query does).
        await admin.countActive(OWNER);
        const { rows } = await pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM ${pg.default.escapeIdentifier(schema)}.tasks WHERE parent_id = $1`,
          [parent],
        );
        return rows[0]?.n ?? 0;
      },
      cleanup: async () => {
        await admin.close();
        for (const store of opened) await store.close().catch(() => undefined);
        await pool.query(`DROP SCHEMA IF EXISTS ${pg.default.escapeIdentifier(schema)} CASCADE`);
        await pool.end();
      },
    };
  });
});
