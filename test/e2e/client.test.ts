// The client library against a real server: MRTR, tasks by push and by polling, journal resume, stdio.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import demo from '../../examples/demo/index.js';
import {
  createClient,
  createStdioTransport,
  InputRequiredError,
  type InputHandler,
} from '../../src/client-entry.js';
import { createSqliteJournal } from '../../src/journal.js';
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
            // The client may have aborted the request meanwhile: then cancelling rejects, which is no failure.
            reader.cancel().catch(() => undefined);
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

  it('mirrors the task id in Mcp-Name on every task method it sends (get, update, cancel)', async () => {
    const sent: { method: string; taskId: unknown; mcpName: string | null }[] = [];
    const recording: typeof fetch = (input, init) => {
      const body = JSON.parse(String(init?.body)) as { method?: string; params?: { taskId?: unknown } };
      const method = String(body.method);
      if (method.startsWith('tasks/'))
        sent.push({
          method,
          taskId: body.params?.taskId,
          mcpName: new Headers(init?.headers).get('mcp-name'),
        });
      return fetch(input, init);
    };
    const client = createClient({ url, onInput: approve, fetch: recording });
    const answered = await client.callTool('generate_report', { size: 'small' });
    const cancelled = await client.callTool('generate_report', { size: 'large' });
    if (answered.kind !== 'task' || cancelled.kind !== 'task') throw new Error('expected tasks');
    expect((await answered.task.result({ poll: true })).status).toBe('completed');
    await cancelled.task.cancel();
    expect(new Set(sent.map((s) => s.method))).toEqual(
      new Set(['tasks/get', 'tasks/update', 'tasks/cancel']),
    );
    for (const s of sent) expect(s.mcpName).toBe(s.taskId);
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
    const resumed = await second.resumeAll();
    expect(resumed.map((h) => h.taskId)).toEqual([call.task.taskId]);
    expect((await resumed[0]!.result()).status).toBe('completed');
    expect(await second.resumeAll()).toEqual([]);
  });

  /** A fetch that lets the first `drops` tools/call requests reach the server, then loses their answers. */
  const losingAnswers = (drops: number, seen: string[]): typeof fetch => {
    return async (input, init) => {
      const res = await fetch(input, init);
      const body = String(init?.body);
      if (body.includes('"tools/call"')) {
        const meta = (JSON.parse(body) as { params: { _meta: Record<string, unknown> } }).params._meta;
        seen.push(String(meta['dev.durable-mcp/idempotencyKey']));
        if (drops-- > 0) {
          await res.text(); // the server answered; the answer never reaches the caller
          throw new TypeError('fetch failed');
        }
      }
      return res;
    };
  };
  const activeTasks = () => server.runtime.store.countActive({ tenant: 'default', principal: 'anonymous' });

  it('retries a tools/call whose answer was lost with the same idempotency key: one task', async () => {
    const keys: string[] = [];
    const before = await activeTasks();
    const client = createClient({ url, fetch: losingAnswers(2, keys), callRetryDelayMs: 10 });
    const call = await client.callTool('generate_report', { size: 'small' });
    if (call.kind !== 'task') throw new Error('expected a task');
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(await activeTasks()).toBe(before + 1);
    await call.task.cancel();
    // Every call gets a key of its own.
    const other = await client.callTool('generate_report', { size: 'small' });
    if (other.kind !== 'task') throw new Error('expected a task');
    expect(other.task.taskId).not.toBe(call.task.taskId);
    expect(keys.at(-1)).not.toBe(keys[0]);
    await other.task.cancel();
  });

  it('refuses an idempotency key with a control character before journaling or sending the call', async () => {
    let sent = 0;
    const counting: typeof fetch = async (input, init) => {
      sent++;
      return fetch(input, init);
    };
    const journalPath = join(dir, 'control-key.journal');
    const client = createClient({ url, fetch: counting, journal: createSqliteJournal(journalPath) });
    await expect(
      client.callTool('generate_report', { size: 'small' }, { idempotencyKey: 'deploy\u001b]0;x\u0007' }),
    ).rejects.toThrow(
      new RangeError("a call's idempotency key must not contain control characters (U+001B at 6)"),
    );
    await expect(
      client.callTool('generate_report', { size: 'small' }, { idempotencyKey: 'deploy\u009b2J' }),
    ).rejects.toBeInstanceOf(RangeError);
    expect(sent).toBe(0);
    expect(await client.resumeAll()).toEqual([]);
  });

  it('tries a call to a server that refuses connections as often as the transport policy says, not again on top', async () => {
    let sent = 0;
    const refusing: typeof fetch = async () => {
      sent++;
      const cause = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      throw new TypeError('fetch failed', { cause });
    };
    const client = createClient({
      url,
      fetch: refusing,
      retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
      callRetries: 2,
      callRetryDelayMs: 1,
    });
    // Nothing was sent, so no answer was lost: the call's own retries (for lost answers) do not multiply the three.
    await expect(client.callTool('generate_report', { size: 'small' })).rejects.toThrow('fetch failed');
    expect(sent).toBe(3);
  });

  it('journals a call before sending it: after a crash, resumeAll gets the task it created, not a second', async () => {
    const journalPath = join(dir, 'crash.journal');
    const keys: string[] = [];
    const before = await activeTasks();
    const crashed = createClient({
      url,
      journal: createSqliteJournal(journalPath),
      fetch: losingAnswers(Infinity, keys),
      capabilities: { elicitation: {} },
      callRetries: 1,
      callRetryDelayMs: 10,
    });
    await expect(crashed.callTool('generate_report', { size: 'small' })).rejects.toThrow('fetch failed');
    expect(await activeTasks()).toBe(before + 1);
    const restarted = createClient({ url, journal: createSqliteJournal(journalPath), onInput: approve });
    const resumed = await restarted.resumeAll();
    expect(resumed).toHaveLength(1);
    expect(await activeTasks()).toBe(before + 1);
    expect((await resumed[0]!.result()).status).toBe('completed');
    expect(await restarted.resumeAll()).toEqual([]);
    // A call answered with an error is not pending either.
    const refused = createClient({ url, journal: createSqliteJournal(journalPath) });
    await expect(refused.callTool('no_such_tool')).rejects.toMatchObject({ code: -32602 });
    expect(await refused.resumeAll()).toEqual([]);
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
