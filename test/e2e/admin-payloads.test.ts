// Payloads in the operator API's task detail on SQLite: only with --admin-payloads, opened with the server's key,
// each read an audit line; without the flag the detail shows none.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../src/advanced.js';
import { startAdminServer, TOKENS, waitUntil, type AdminServer } from '../support/admin-api.js';
import { startServe } from '../support/cli.js';

const sqlite = (dir: string): string[] => ['--store', join(dir, 'tasks.db')];
const KEY = `k1:${randomBytes(32).toString('base64')}`;

/** Starts a server, makes a completed and a waiting task as alice; their ids. */
async function withTasks(flags: string[]): Promise<{ server: AdminServer; done: string; asking: string }> {
  const server = await startAdminServer(sqlite, true, ['--encryption-key', KEY, ...flags]);
  const done = await server.create('alice', 'quick_job', { ms: 7 });
  // A client that can answer an elicitation: the task waits for it.
  const client = createHttpClient({
    url: server.proc.url,
    token: TOKENS.alice,
    capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} }, elicitation: {} },
  });
  const call = await client.request('tools/call', { name: 'ask_job', arguments: { ms: 0 } });
  const asking = call.result.taskId as string;
  const statusOf = async (id: string) => (await server.api('GET', `/tasks/${id}`, 'root')).body.status;
  await waitUntil(
    async () => (await statusOf(done)) === 'completed' && (await statusOf(asking)) === 'input_required',
    'the tasks to settle',
  );
  return { server, done, asking };
}

const auditLines = (server: AdminServer): Record<string, unknown>[] =>
  server.proc
    .stderr()
    .split('\n')
    .filter((l) => l.includes('"type":"audit"') && l.includes('"admin.payloads"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('serve --admin-payloads', () => {
  let s: Awaited<ReturnType<typeof withTasks>>;
  beforeAll(async () => {
    s = await withTasks(['--admin-payloads']);
  }, 30_000);
  afterAll(async () => s?.server.close());

  it('shows arguments, input requests and results, opened, and audits each read', async () => {
    const done = await s.server.api('GET', `/tasks/${s.done}`, 'root');
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      id: s.done,
      status: 'completed',
      arguments: { ms: 7 },
      inputs: [],
      result: { resultType: 'complete', content: [{ type: 'text', text: 'done' }] },
    });
    const asking = await s.server.api('GET', `/tasks/${s.asking}`, 'opsA');
    expect(asking.body).toMatchObject({ arguments: { ms: 0 }, inputs: [{ key: 'go' }] });
    const [input] = asking.body.inputs as { request: Record<string, unknown>; answer?: unknown }[];
    expect(input?.request).toMatchObject({ method: 'elicitation/create', params: { message: 'go on?' } });
    expect(input).not.toHaveProperty('answer');
    expect(asking.body).not.toHaveProperty('result');
    // Log lines are written asynchronously, after earlier reads' lines: wait for these two themselves.
    const audited = (tenant: string, principal: string, taskId: string) =>
      auditLines(s.server).some(
        (l) => l.tenant === tenant && l.principal === principal && l.taskId === taskId && l.outcome === 'ok',
      );
    await waitUntil(
      async () => audited('ops', 'root', s.done) && audited('A', 'ops-a', s.asking),
      'the audit lines',
    );
  });

  it('reads no payload for a caller who is not an operator, nor for an unknown task', async () => {
    const before = auditLines(s.server).length;
    const other = await s.server.api('GET', `/tasks/${s.done}`, 'bob');
    expect(other.status).toBe(403);
    const missing = await s.server.api('GET', '/tasks/task_0000000000000000000000', 'root');
    expect(missing.status).toBe(404);
    expect(missing.body).not.toHaveProperty('arguments');
    expect(auditLines(s.server).length).toBe(before);
  });
});

describe('serve without --admin-payloads', () => {
  let s: Awaited<ReturnType<typeof withTasks>>;
  beforeAll(async () => {
    s = await withTasks([]);
  }, 30_000);
  afterAll(async () => s?.server.close());

  it('keeps payloads out of the detail and writes no payload audit line', async () => {
    for (const id of [s.done, s.asking]) {
      const reply = await s.server.api('GET', `/tasks/${id}`, 'root');
      expect(reply.status).toBe(200);
      for (const field of ['arguments', 'inputs', 'result']) expect(reply.body).not.toHaveProperty(field);
    }
    expect(auditLines(s.server)).toEqual([]);
  });
});

describe('serve --admin-payloads --no-audit', () => {
  it('is refused: every read of payloads must leave an audit line', async () => {
    await expect(startServe(['--admin-payloads', '--no-audit'])).rejects.toThrow(/drop --no-audit/);
  });
});
