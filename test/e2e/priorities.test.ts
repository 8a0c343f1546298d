// task.priority and the caller's _meta["dev.durable-mcp/priority"] over a real port: a caller's tasks are claimed
// highest priority first; the caller's priority counts only where the server allows it, and is checked there.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient, createSqliteTaskStore } from '../../src/advanced.js';
import { defineTool, textResult } from '../../src/index.js';
import type { BuiltInTaskStore } from '../../src/stores/built-in.js';
import { startDurableServer } from '../support/durable-server.js';

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const PRIORITY = 'dev.durable-mcp/priority';

const job = defineTool<{ name: string; urgent?: boolean }>({
  name: 'job',
  inputSchema: { type: 'object', properties: { name: { type: 'string' }, urgent: { type: 'boolean' } } },
  task: { support: 'required', priority: (args) => (args.urgent === true ? 10 : 0) },
  handler: ({ name }) => textResult(name),
});

/** A server that runs no tasks (its store is claimed by hand), allowing callers' priorities or not. */
async function serverOf(allowCallerPriority: boolean) {
  let store: BuiltInTaskStore | undefined;
  const server = await startDurableServer({
    toolSets: [{ tools: [job] }],
    worker: false,
    tasks: { tasksGetRate: false, allowCallerPriority },
    store: (dir) => (store = createSqliteTaskStore({ path: join(dir, 'tasks.db') })),
  });
  const client = createHttpClient({ url: server.url, capabilities: TASKS });
  const call = async (args: Record<string, unknown>, meta?: Record<string, unknown>) =>
    client.request('tools/call', { name: 'job', arguments: args, ...(meta ? { _meta: meta } : {}) });
  const start = async (args: Record<string, unknown>, meta?: Record<string, unknown>): Promise<string> =>
    ((await call(args, meta)).result as { taskId: string }).taskId;
  const claimOrder = async (): Promise<string[]> => {
    const out: string[] = [];
    for (
      let c = await store?.claim('w', 60_000, Date.now());
      c;
      c = await store?.claim('w', 60_000, Date.now())
    )
      out.push(c.id);
    return out;
  };
  return { server, call, start, claimOrder };
}

describe('task priorities', () => {
  let allowing: Awaited<ReturnType<typeof serverOf>>;
  let ignoring: Awaited<ReturnType<typeof serverOf>>;
  beforeAll(async () => {
    allowing = await serverOf(true);
    ignoring = await serverOf(false);
  });
  afterAll(async () => {
    await allowing.server.close();
    await ignoring.server.close();
  });

  it("claims a caller's tasks by the tool's priority, then the caller's where the server allows it", async () => {
    const first = await allowing.start({ name: 'a' });
    const second = await allowing.start({ name: 'b' });
    const urgent = await allowing.start({ name: 'c', urgent: true });
    const asked = await allowing.start({ name: 'd' }, { [PRIORITY]: 50 });
    const later = await allowing.start({ name: 'e', urgent: true }, { [PRIORITY]: -5 });
    expect(await allowing.claimOrder()).toEqual([asked, urgent, first, second, later]);
  });

  it("refuses a caller's priority out of range with -32602 where the server allows it", async () => {
    for (const bad of [101, 1.5, '3']) {
      await expect(allowing.call({ name: 'x' }, { [PRIORITY]: bad })).rejects.toMatchObject({
        code: -32602,
        message: `Invalid params: _meta["${PRIORITY}"] must be a whole number from -100 to 100`,
      });
    }
  });

  it("ignores the caller's priority where the server does not allow it", async () => {
    const first = await ignoring.start({ name: 'a' }, { [PRIORITY]: 'anything' });
    const second = await ignoring.start({ name: 'b' }, { [PRIORITY]: 100 });
    const urgent = await ignoring.start({ name: 'c', urgent: true });
    expect(await ignoring.claimOrder()).toEqual([urgent, first, second]);
  });
});
