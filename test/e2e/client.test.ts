// The client library against a real server: MRTR, tasks by push and by polling, journal resume, stdio.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import demo from '../../examples/demo/index.js';
import {
  createClient,
  createSqliteJournal,
  createStdioTransport,
  InputRequiredError,
  type InputHandler,
} from '../../src/client-entry.js';
import { BIN } from '../support/cli.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';

let server: DurableTestServer;
let url: string;
let dir: string;

beforeAll(async () => {
  process.env.DURABLE_MCP_DEMO_OUTLINE_MS = '100';
  server = await startDurableServer({ toolSets: [demo] });
  url = server.url;
  dir = server.dir;
});

afterAll(() => server.close());

const approve: InputHandler = (requests) =>
  Object.fromEntries(
    Object.entries(requests).map(([key, r]) => [
      key,
      JSON.stringify(r).includes('approved')
        ? { action: 'accept', content: { approved: true } }
        : { action: 'accept', content: { name: 'Ada' } },
    ]),
  );

describe('client', () => {
  it('calls a tool synchronously and runs MRTR rounds through the input handler', async () => {
    const client = createClient({
      url,
      clientInfo: { name: 'test', version: '1' },
      onInput: approve,
      tasks: false,
    });
    const echo = await client.callTool('echo', { text: 'hello' });
    expect(echo).toMatchObject({ kind: 'result', result: { content: [{ text: 'hello' }] } });
    const greet = await client.callTool('greet_person');
    expect(greet).toMatchObject({ kind: 'result', result: { content: [{ text: 'Hello, Ada!' }] } });
    // Without the tasks extension, generate_report runs synchronously: the approval is an MRTR round.
    const report = await client.callTool('generate_report', { size: 'small' });
    expect(report).toMatchObject({ kind: 'result', result: { structuredContent: { approved: true } } });
  });

  it('surfaces input nobody can answer instead of polling forever', async () => {
    const client = createClient({ url, tasks: false, capabilities: { elicitation: {} } });
    await expect(client.callTool('greet_person')).rejects.toBeInstanceOf(InputRequiredError);
    const tasky = createClient({ url, capabilities: { elicitation: {} } });
    const call = await tasky.callTool('generate_report', { size: 'small' });
    if (call.kind !== 'task') throw new Error('expected a task');
    await expect(call.task.result()).rejects.toMatchObject({
      name: 'InputRequiredError',
      taskId: call.task.taskId,
    });
    await call.task.cancel();
  });

  it('follows a task by push, answering its input, to completion', async () => {
    const client = createClient({ url, onInput: approve });
    const call = await client.callTool('generate_report', { size: 'medium' });
    expect(call.kind).toBe('task');
    if (call.kind !== 'task') return;
    const statuses: string[] = [];
    const outcome = await call.task.result({ onUpdate: (t) => statuses.push(String(t.status)) });
    expect(outcome).toMatchObject({
      status: 'completed',
      result: { structuredContent: { size: 'medium', approved: true } },
    });
    expect(statuses).toContain('input_required');
  });

  it('falls back to polling when the listen stream breaks', async () => {
    let broken = 0;
    const breakingFetch: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (!String(init?.body).includes('"subscriptions/listen"') || res.body === null) return res;
      broken++;
      const reader = res.body.getReader();
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (sent++ > 0) {
            controller.error(new Error('connection reset'));
            void reader.cancel();
            return;
          }
          const { value, done } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        },
      });
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const client = createClient({ url, onInput: approve, fetch: breakingFetch });
    const call = await client.callTool('generate_report', { size: 'small' });
    if (call.kind !== 'task') throw new Error('expected a task');
    const outcome = await call.task.result();
    expect(outcome.status).toBe('completed');
    expect(broken).toBeGreaterThan(0);
  });

  it('cancels through the handle', async () => {
    const client = createClient({ url });
    const call = await client.callTool('generate_report', { size: 'large' });
    if (call.kind !== 'task') throw new Error('expected a task');
    await call.task.cancel();
    expect((await call.task.result({ poll: true })).status).toBe('cancelled');
  });

  it('resumes unfinished tasks from its journal after a restart, and closing never cancels', async () => {
    const journalPath = join(dir, 'client.journal');
    const first = createClient({
      url,
      journal: createSqliteJournal(journalPath),
      capabilities: { elicitation: {} },
    });
    const call = await first.callTool('generate_report', { size: 'small' });
    if (call.kind !== 'task') throw new Error('expected a task');
    await first.close();
    const second = createClient({ url, journal: createSqliteJournal(journalPath), onInput: approve });
    const resumed = second.resumeAll();
    expect(resumed.map((h) => h.taskId)).toEqual([call.task.taskId]);
    expect((await resumed[0]!.result()).status).toBe('completed');
    expect(second.resumeAll()).toEqual([]);
  });

  it('speaks stdio to a spawned server, tasks included', async () => {
    const transport = createStdioTransport(
      process.execPath,
      [BIN, 'serve', '--stdio', '--store', join(dir, 'stdio.db')],
      {
        ...process.env,
        DURABLE_MCP_DEMO_OUTLINE_MS: '50',
      },
    );
    const client = createClient({ transport, onInput: approve });
    expect((await client.discover()).supportedVersions).toEqual(['2026-07-28']);
    expect(await client.callTool('echo', { text: 'over stdio' })).toMatchObject({
      result: { content: [{ text: 'over stdio' }] },
    });
    const call = await client.callTool('generate_report', { size: 'small' });
    if (call.kind !== 'task') throw new Error('expected a task');
    expect((await call.task.result()).status).toBe('completed');
    await client.close();
  });
});
