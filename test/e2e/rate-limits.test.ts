// task.rateLimit over a real port: a tool limited to one start a second per customer (a key computed from its
// arguments) starts a customer's second task a second after its first, another customer's at once; the one that
// waits says so; a task that sleeps resumes at once, its start counted once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../src/advanced.js';
import { defineTool, textResult } from '../../src/index.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
/** Every run's start (ms), by the call's name; a run is every start, first or resumed. */
const runs = new Map<string, number[]>();
let server: DurableTestServer;

const charge = defineTool<{ customer: string; name: string }>({
  name: 'charge',
  inputSchema: {
    type: 'object',
    properties: { customer: { type: 'string' }, name: { type: 'string' } },
    required: ['customer', 'name'],
  },
  task: {
    support: 'required',
    rateLimit: { limit: 1, periodMs: 1_000, key: (args) => `customer:${String(args.customer)}` },
  },
  handler: async ({ name }, ctx) => {
    runs.set(name, [...(runs.get(name) ?? []), Date.now()]);
    await ctx.sleep('settle', 100);
    return textResult(`charged ${name}`);
  },
});

beforeAll(async () => {
  server = await startDurableServer({
    toolSets: [{ tools: [charge] }],
    worker: { concurrency: 8, pollMs: 20 },
  });
});
afterAll(() => server.close());

describe('task.rateLimit with a key computed from the arguments', () => {
  it("spaces one customer's starts by the period, starts another's at once, and resumes sleeps without waiting", async () => {
    const client = createHttpClient({ url: server.url, capabilities: TASKS });
    const call = async (customer: string, name: string): Promise<string> => {
      const { result } = await client.request('tools/call', {
        name: 'charge',
        arguments: { customer, name },
      });
      return (result as { taskId: string }).taskId;
    };
    const ids = [await call('acme', 'a1'), await call('acme', 'a2'), await call('globex', 'g1')];
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
    const first = (name: string): number => runs.get(name)?.[0] as number;
    expect(first('a2') - first('a1')).toBeGreaterThanOrEqual(900);
    expect(Math.abs(first('g1') - first('a1'))).toBeLessThan(900);
    // Each ran twice (its sleep ended 100 ms later): the resume did not wait for the next start of its key.
    for (const name of ['a1', 'a2', 'g1']) {
      const [start, resumed] = runs.get(name) as number[];
      expect((resumed as number) - (start as number)).toBeLessThan(900);
    }
    expect(messages).toContain('Waiting for the rate limit of key "customer:acme" to start.');
    expect(messages.some((m) => m.includes('globex') && m.startsWith('Waiting'))).toBe(false);
  });
});
