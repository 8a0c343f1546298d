// Calls that run within their request take the slots of their tool's concurrency key, over a real port and on both
// stores: a `never` tool's call waits while the key is full (held by another call or by a task of the key), runs once
// a slot frees in time, and is refused server busy (JSON-RPC 429, HTTP 429 with Retry-After) when none does.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient, createPostgresTaskStore, type BuiltInTaskStore } from '../../src/advanced.js';
import { defineTool, textResult } from '../../src/index.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';
import { dropSchema, TEST_POSTGRES_URL, withPostgres } from '../support/postgres.js';

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const SLOT_WAIT_MS = 1_500;

/** Gates the handlers wait on, by name: the test opens them. */
const gates = new Map<string, () => void>();
const gate = (name: string): Promise<void> => new Promise((resolve) => gates.set(name, resolve));
const open = (name: string): void => gates.get(name)?.();
const until = async (what: string, ok: () => boolean): Promise<void> => {
  const end = Date.now() + 10_000;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

const charge = defineTool<{ gate: string }>({
  name: 'charge',
  inputSchema: { type: 'object', properties: { gate: { type: 'string' } }, required: ['gate'] },
  task: { support: 'never', concurrency: { limit: 1, key: 'payments' } },
  handler: async (args) => {
    await gate(args.gate);
    return textResult(`charged ${args.gate}`);
  },
});

const refund = defineTool<{ gate: string }>({
  name: 'refund',
  inputSchema: { type: 'object', properties: { gate: { type: 'string' } }, required: ['gate'] },
  task: { support: 'optional', concurrency: { limit: 1, key: 'payments' } },
  handler: async (args, ctx) => {
    await ctx.step('refund', () => gate(args.gate));
    return textResult(`refunded ${args.gate}`);
  },
});

const lookup = defineTool<{ gate: string }>({
  name: 'lookup',
  inputSchema: { type: 'object', properties: { gate: { type: 'string' } }, required: ['gate'] },
  task: { support: 'never' },
  handler: async (args, ctx) => {
    const text = await ctx.step('look', () => gate(args.gate).then(() => `looked ${args.gate}`), {
      concurrency: { key: 'payments', limit: 1 },
    });
    return textResult(text);
  },
});

function callSlotSuite(name: string, store?: (dir: string) => BuiltInTaskStore): void {
  describe(`calls within their request hold slots of their key: ${name}`, () => {
    let server: DurableTestServer;
    beforeAll(async () => {
      server = await startDurableServer({
        toolSets: [{ tools: [charge, refund, lookup] }],
        tasks: { tasksGetRate: false, slotWaitMs: SLOT_WAIT_MS },
        worker: { concurrency: 4, pollMs: 20 },
        ...(store === undefined ? {} : { store }),
      });
    });
    afterAll(() => server.close());

    const callCharge = (g: string) =>
      createHttpClient({ url: server.url }).request('tools/call', { name: 'charge', arguments: { gate: g } });

    it('refuses a call whose key stays full for the whole wait, server busy, naming the key', async () => {
      const first = callCharge(`${name}-a`);
      await until('the first call to run', () => gates.has(`${name}-a`));
      const started = Date.now();
      const refused = await callCharge(`${name}-b`).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(SLOT_WAIT_MS - 50);
      expect(refused).toMatchObject({
        code: 429,
        httpStatus: 429,
        message: expect.stringContaining('concurrency key "payments"') as unknown,
        data: { concurrencyKey: 'payments', limit: 1, retryAfterMs: 1_000 },
      });
      expect(gates.has(`${name}-b`)).toBe(false);
      open(`${name}-a`);
      expect((await first).result).toMatchObject({ content: [{ type: 'text', text: `charged ${name}-a` }] });
    });

    it('holds a slot of the key for a limited step of a call without a task, and refuses it when none frees', async () => {
      const client = createHttpClient({ url: server.url });
      const look = (g: string) => client.request('tools/call', { name: 'lookup', arguments: { gate: g } });
      const first = callCharge(`${name}-g`);
      await until('the call to run', () => gates.has(`${name}-g`));
      const refused = await look(`${name}-h`).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refused).toMatchObject({
        code: 429,
        message: expect.stringContaining('concurrency key "payments" (for step "look")') as unknown,
      });
      expect(gates.has(`${name}-h`)).toBe(false);
      const waiting = look(`${name}-i`);
      await new Promise((r) => setTimeout(r, 200));
      open(`${name}-g`);
      await until('the step to run', () => gates.has(`${name}-i`));
      open(`${name}-i`);
      expect((await waiting).result).toMatchObject({ content: [{ text: `looked ${name}-i` }] });
      await first;
    });

    it('runs a waiting call once a slot frees in time, whether a call or a task held it', async () => {
      // Held by a call.
      const first = callCharge(`${name}-c`);
      await until('the first call to run', () => gates.has(`${name}-c`));
      const second = callCharge(`${name}-d`);
      await new Promise((r) => setTimeout(r, 200));
      expect(gates.has(`${name}-d`)).toBe(false);
      open(`${name}-c`);
      await until('the second call to run', () => gates.has(`${name}-d`));
      open(`${name}-d`);
      expect((await first).result).toMatchObject({ content: [{ text: `charged ${name}-c` }] });
      expect((await second).result).toMatchObject({ content: [{ text: `charged ${name}-d` }] });
      // Held by a task of the key.
      const client = createHttpClient({ url: server.url, capabilities: TASKS });
      const { result } = await client.request('tools/call', {
        name: 'refund',
        arguments: { gate: `${name}-e` },
      });
      const { taskId } = result as { taskId: string };
      await until('the task to run', () => gates.has(`${name}-e`));
      const third = callCharge(`${name}-f`);
      await new Promise((r) => setTimeout(r, 200));
      expect(gates.has(`${name}-f`)).toBe(false);
      open(`${name}-e`);
      await until('the third call to run', () => gates.has(`${name}-f`));
      open(`${name}-f`);
      expect((await third).result).toMatchObject({ content: [{ text: `charged ${name}-f` }] });
      const statusOf = async () =>
        ((await client.request('tasks/get', { taskId })).result as { status: string }).status;
      const end = Date.now() + 10_000;
      while ((await statusOf()) !== 'completed' && Date.now() < end)
        await new Promise((r) => setTimeout(r, 20));
      expect(await statusOf()).toBe('completed');
    });
  });
}

callSlotSuite('sqlite');

await withPostgres('the PostgreSQL tests of calls holding slots', () => {
  const schema = `dmcp_call_slots_${randomBytes(4).toString('hex')}`;
  afterAll(() => dropSchema(schema));
  callSlotSuite('postgres', () =>
    createPostgresTaskStore({ connectionString: TEST_POSTGRES_URL, schema, poolSize: 4 }),
  );
});
