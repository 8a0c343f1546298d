// task.concurrency over a real port: a tool limited to one run per customer (a key computed from its arguments)
// runs one task per customer at a time, tasks of other customers alongside; the one that waits says so. A tool holding
// its slot until its task ends (hold 'task') runs one task through its sleep before the next starts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../src/advanced.js';
import { defineTool, textResult } from '../../src/index.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
/** Runs of `sync_customer` going now, by customer, and the most seen at once per customer. */
const running = new Map<string, number>();
const most = new Map<string, number>();
let server: DurableTestServer;

const syncCustomer = defineTool<{ customer: string }>({
  name: 'sync_customer',
  inputSchema: { type: 'object', properties: { customer: { type: 'string' } }, required: ['customer'] },
  task: {
    support: 'required',
    concurrency: { limit: 1, key: (args) => `customer:${String(args.customer)}` },
  },
  handler: async ({ customer }, ctx) => {
    const now = (running.get(customer) ?? 0) + 1;
    running.set(customer, now);
    most.set(customer, Math.max(most.get(customer) ?? 0, now));
    await ctx.step('sync', () => new Promise<string>((resolve) => setTimeout(() => resolve(customer), 300)));
    running.set(customer, (running.get(customer) ?? 1) - 1);
    return textResult(`synced ${customer}`);
  },
});

/** What the runs of `release` did, in order: a release's sleep must not let another start. */
const releases: string[] = [];
const release = defineTool<{ name: string }>({
  name: 'release',
  inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  task: { support: 'required', concurrency: { limit: 1, hold: 'task' } },
  handler: async ({ name }, ctx) => {
    await ctx.step('build', () => releases.push(`build ${name}`));
    await ctx.sleep('soak', 300);
    await ctx.step('ship', () => releases.push(`ship ${name}`));
    return textResult(`released ${name}`);
  },
});

beforeAll(async () => {
  server = await startDurableServer({
    toolSets: [{ tools: [syncCustomer, release] }],
    worker: { concurrency: 8, pollMs: 20 },
  });
});
afterAll(() => server.close());

describe('task.concurrency with a key computed from the arguments', () => {
  it('runs one task per customer at a time and the other customers alongside; the waiting ones say why', async () => {
    const client = createHttpClient({ url: server.url, capabilities: TASKS });
    const call = async (customer: string): Promise<string> => {
      const { result } = await client.request('tools/call', {
        name: 'sync_customer',
        arguments: { customer },
      });
      return (result as { taskId: string }).taskId;
    };
    const ids = [await call('acme'), await call('acme'), await call('acme'), await call('globex')];
    const messages: string[] = [];
    const end = Date.now() + 20_000;
    for (;;) {
      const tasks = await Promise.all(
        ids.map(
          async (taskId) => (await client.request('tasks/get', { taskId })).result as Record<string, unknown>,
        ),
      );
      for (const t of tasks) if (typeof t.statusMessage === 'string') messages.push(t.statusMessage);
      if (tasks.every((t) => t.status === 'completed')) break;
      if (Date.now() > end) throw new Error(`not all completed: ${JSON.stringify(tasks)}`);
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    expect(most.get('acme')).toBe(1);
    expect(most.get('globex')).toBe(1);
    expect(messages).toContain('Waiting for a free slot of concurrency key "customer:acme" to run.');
    expect(messages.some((m) => m.includes('globex') && m.startsWith('Waiting'))).toBe(false);
  });
});

describe("task.concurrency with hold: 'task'", () => {
  it('keeps the slot through a sleep: the second task starts once the first has ended', async () => {
    const client = createHttpClient({ url: server.url, capabilities: TASKS });
    const ids: string[] = [];
    for (const name of ['a', 'b']) {
      const { result } = await client.request('tools/call', { name: 'release', arguments: { name } });
      ids.push((result as { taskId: string }).taskId);
    }
    const end = Date.now() + 20_000;
    for (;;) {
      const tasks = await Promise.all(
        ids.map(
          async (taskId) => (await client.request('tasks/get', { taskId })).result as { status: string },
        ),
      );
      if (tasks.every((t) => t.status === 'completed')) break;
      if (Date.now() > end) throw new Error(`not all completed: ${JSON.stringify(tasks)}`);
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    // With hold 'run', b would build while a sleeps.
    expect(releases).toEqual(['build a', 'ship a', 'build b', 'ship b']);
  });
});
