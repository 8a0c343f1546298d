// resumeAll against a real server over HTTP: calls the server refuses on resend are reported and forgotten, calls it
// cannot be reached for are reported and kept, and resumed handles carry the label, tool and arguments of the call.
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import demo from '../../examples/demo/index.js';
import { createClient, ProtocolError, type InputHandler } from '../../src/client-entry.js';
import { createSqliteJournal } from '../../src/journal.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';

let server: DurableTestServer;

/** A TCP relay in front of the server: closing it makes the server unreachable (connections refused) at one URL. */
class Relay {
  private listener: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: number) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  async open(): Promise<void> {
    const listener = createServer((socket) => {
      const peer = connect(this.target, '127.0.0.1');
      for (const s of [socket, peer]) {
        this.sockets.add(s);
        s.on('error', () => s.destroy());
        s.on('close', () => this.sockets.delete(s));
      }
      socket.pipe(peer).pipe(socket);
    });
    await new Promise<void>((resolve) => listener.listen(this.port, '127.0.0.1', resolve));
    this.port = (listener.address() as AddressInfo).port;
    this.listener = listener;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.listener?.close(resolve));
  }
}

beforeAll(async () => {
  process.env.DURABLE_MCP_DEMO_OUTLINE_MS = '100';
  // One unfinished task per principal: the quota that refuses a call sent again.
  server = await startDurableServer({
    toolSets: [demo],
    tasks: { tasksGetRate: false, defaultPollIntervalMs: 100, maxActiveTasksPerPrincipal: 1 },
  });
});

afterAll(() => server.close());

const approve: InputHandler = (requests) =>
  Object.fromEntries(
    Object.keys(requests).map((key) => [key, { action: 'accept', content: { approved: true } }]),
  );

/** A fetch that fails every tools/call before it leaves (as a crash after journaling it would): the call stays pending. */
const crashingCalls: typeof fetch = async (input, init) => {
  if (String(init?.body).includes('"tools/call"')) throw new TypeError('fetch failed');
  return fetch(input, init);
};

/** Journals a call that never reached the server, as a client that crashed while sending it leaves it. */
async function leavePending(
  url: string,
  journalPath: string,
  tool: string,
  args: Record<string, unknown>,
  label: string,
): Promise<void> {
  const crashed = createClient({
    url,
    journal: createSqliteJournal(journalPath),
    fetch: crashingCalls,
    callRetries: 0,
  });
  await expect(crashed.callTool(tool, args, { label })).rejects.toThrow('fetch failed');
  await crashed.close();
}

describe('resumeAll', () => {
  it('reports each journaled call the server refuses on resend with its error and label, and forgets it', async () => {
    const journalPath = join(server.dir, 'refused.journal');
    await leavePending(server.url, journalPath, 'generate_report', { size: 'small' }, 'report for Ada');
    await leavePending(server.url, journalPath, 'retired_tool', { id: 7 }, 'from the old release');
    // Meanwhile another call took the principal's one unfinished task.
    const other = createClient({ url: server.url, capabilities: { elicitation: {} } });
    const busy = await other.callTool('generate_report', { size: 'large' });
    if (busy.kind !== 'task') throw new Error('expected a task');

    const restarted = createClient({ url: server.url, journal: createSqliteJournal(journalPath) });
    const resumed = await restarted.resumeAll();
    expect(resumed).toEqual([]);
    expect(resumed.failures).toHaveLength(2);
    expect(resumed.failures).toMatchObject([
      {
        call: { label: 'report for Ada', tool: 'generate_report', args: { size: 'small' } },
        error: { code: 429 },
        pending: false,
      },
      {
        call: { label: 'from the old release', tool: 'retired_tool', args: { id: 7 } },
        error: { code: -32602 },
        pending: false,
      },
    ]);
    for (const f of resumed.failures) expect(f.error).toBeInstanceOf(ProtocolError);
    expect(resumed.failures[0]!.call.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    // The server answered: the journal forgets them, so the next resumeAll has nothing to report.
    expect((await restarted.resumeAll()).failures).toEqual([]);
    await busy.task.cancel();
  });

  it('keeps journaled calls pending while the server cannot be reached, and a later resumeAll sends them', async () => {
    const relay = new Relay(Number(new URL(server.url).port));
    await relay.open();
    const journalPath = join(server.dir, 'unreachable.journal');
    await leavePending(relay.url, journalPath, 'generate_report', { size: 'small' }, 'nightly');
    await leavePending(relay.url, journalPath, 'echo', { text: 'hi' }, 'greeting');
    await relay.close();

    let attempts = 0;
    const counting: typeof fetch = (input, init) => {
      attempts++;
      return fetch(input, init);
    };
    const down = createClient({
      url: relay.url,
      journal: createSqliteJournal(journalPath),
      fetch: counting,
      retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
    });
    const failed = await down.resumeAll();
    expect(failed).toEqual([]);
    expect(failed.failures).toMatchObject([
      { call: { label: 'nightly', tool: 'generate_report' }, pending: true },
      { call: { label: 'greeting', tool: 'echo' }, pending: true },
    ]);
    expect(String((failed.failures[0]!.error as Error).cause)).toMatch(/ECONNREFUSED/);
    // The server is unreachable: the first call tells so; the second is not tried on top.
    expect(attempts).toBe(2);

    await relay.open();
    const up = createClient({ url: relay.url, journal: createSqliteJournal(journalPath), onInput: approve });
    const resumed = await up.resumeAll();
    expect(resumed.failures).toEqual([]);
    expect(resumed.map((h) => [h.label, h.tool, h.args])).toEqual([
      ['nightly', 'generate_report', { size: 'small' }],
    ]);
    // A call the server answers without a task is reported with its result.
    expect(resumed.results).toMatchObject([
      { call: { label: 'greeting', tool: 'echo' }, result: { content: [{ text: 'hi' }] } },
    ]);
    expect((await resumed[0]!.result()).status).toBe('completed');
    expect(await up.resumeAll()).toEqual([]);
    await relay.close();
  });

  it('gives the handles of journaled tasks the label, tool and arguments of the call that created them', async () => {
    const journalPath = join(server.dir, 'labels.journal');
    const first = createClient({
      url: server.url,
      journal: createSqliteJournal(journalPath),
      capabilities: { elicitation: {} },
    });
    const call = await first.callTool('generate_report', { size: 'medium' }, { label: 'q3 report' });
    if (call.kind !== 'task') throw new Error('expected a task');
    expect([call.task.label, call.task.tool, call.task.args]).toEqual([
      'q3 report',
      'generate_report',
      { size: 'medium' },
    ]);
    await first.close();

    const second = createClient({
      url: server.url,
      journal: createSqliteJournal(journalPath),
      onInput: approve,
    });
    const resumed = await second.resumeAll();
    expect(resumed.map((h) => [h.taskId, h.label, h.tool, h.args])).toEqual([
      [call.task.taskId, 'q3 report', 'generate_report', { size: 'medium' }],
    ]);
    expect((await resumed[0]!.result()).status).toBe('completed');
  });

  it('refuses a label longer than 256 characters before sending or journaling the call', async () => {
    const journal = createSqliteJournal(':memory:');
    const client = createClient({ url: server.url, journal });
    await expect(client.callTool('echo', { text: 'x' }, { label: 'x'.repeat(257) })).rejects.toThrow(
      RangeError,
    );
    expect(journal.pendingCalls?.()).toEqual([]);
    const fits = await client.callTool('echo', { text: 'x' }, { label: 'x'.repeat(256) });
    expect(fits.kind).toBe('result');
    journal.close();
  });
});
