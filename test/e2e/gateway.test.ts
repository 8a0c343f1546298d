// `durable-mcp gateway` over real processes: an MCP server written with the official TypeScript SDK v1 (McpServer,
// over stdio and over Streamable HTTP), which knows nothing of tasks, served behind the gateway. Its calls become
// durable tasks: results exact, progress as status, cancel told upstream, a gateway SIGKILL answered by the delivery
// rules (an idempotent tool sent again; any other "outcome unknown", then retried by an operator), a crashed upstream
// restarted, clients without the extension served through the facade tools, and no principal sees another's task.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TOKENS, waitUntil } from '../support/admin-api.js';
import { createHttpClient } from '../../src/advanced.js';
import { createInterface } from 'node:readline';
import { BIN, envelope, startListening, type ServeProcess } from '../support/cli.js';
import {
  askingClient,
  gatewayDir,
  gatewayClient,
  operatorRetry,
  callTool,
  settled,
  startGateway as start,
  SUM,
  UPSTREAM,
  upstreamCalls as received,
  upstreamEnv,
  type GatewayDir,
  type GatewayOptions,
  type Json,
} from '../support/gateway.js';

let at: GatewayDir;
const procs: ServeProcess[] = [];

beforeEach(() => {
  at = gatewayDir(mkdtempSync(join(tmpdir(), 'durable-mcp-gateway-')));
});

afterEach(async () => {
  for (const p of procs.splice(0)) {
    p.child.kill('SIGKILL');
    await p.exited;
  }
  rmSync(at.dir, { recursive: true, force: true });
});

const cancels = (): string => at.cancels;
const upstreamCalls = (tool?: string): Json[] => received(at, tool);
const startGateway = (extra: string[] = [], upstream?: string, env: Record<string, string> = {}) =>
  start(at, procs, { extra, upstream, env } satisfies GatewayOptions);
const client = gatewayClient;

/** A port on 127.0.0.1 that nothing listens on (one the system just handed out and took back). */
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/** Polls tasks/get as `who` (the task's owner) until the task completed. */
async function completedAs(gw: ServeProcess, who: 'alice' | 'bob', taskId: string): Promise<void> {
  const end = Date.now() + 30_000;
  while ((await client(gw, who).request('tasks/get', { taskId })).result.status !== 'completed') {
    if (Date.now() > end) throw new Error(`task of ${who} did not complete`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('durable-mcp gateway in front of an SDK v1 server over stdio', () => {
  it('answers a 10 s call with a task at once, shows upstream progress, and completes with the exact result', async () => {
    const gw = await startGateway();
    const started = Date.now();
    const created = await callTool(gw, 'alice', 'slow_sum', { a: 2, b: 3, ms: 10_000 });
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    // The answer came long before the upstream's work could have ended.
    expect(Date.now() - started).toBeLessThan(5_000);
    const seen: string[] = [];
    const done = await settled(gw, created.taskId as string, ['completed'], seen);
    // The upstream's exact result, nothing lost or added besides the gateway's own envelope fields.
    const { resultType, _meta, ...result } = done.result as Json;
    expect({ resultType, _meta }).toEqual({
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': expect.any(Object) },
    });
    expect(result).toEqual(SUM);
    expect(seen.some((m) => /step \d+ of 10/.test(m))).toBe(true);
    const [sent] = upstreamCalls('slow_sum');
    expect(sent?.args).toEqual({ a: 2, b: 3, ms: 10_000 });
    // The task's key goes upstream, for an upstream that honours keys.
    expect((sent?.meta as Json)['dev.durable-mcp/idempotencyKey']).toBe(
      `durable-mcp:${String(created.taskId)}`,
    );
  }, 60_000);

  it("shows the upstream's log message about the call as the task's status, cut to a bounded length", async () => {
    const gw = await startGateway();
    const short = await callTool(gw, 'alice', 'slow_sum', { a: 1, b: 1, ms: 1_500, note: 'warming up' });
    const seen: string[] = [];
    await settled(gw, short.taskId as string, ['completed'], seen);
    expect(seen).toContain('warming up');
    const long = await callTool(gw, 'alice', 'slow_sum', { a: 1, b: 1, ms: 1_500, note: 'x'.repeat(2_000) });
    const seenLong: string[] = [];
    await settled(gw, long.taskId as string, ['completed'], seenLong);
    expect(seenLong).toContain(`${'x'.repeat(499)}…`);
    expect(seenLong.every((m) => m.length <= 500)).toBe(true);
  });

  it('shows another principal nothing of the task: the same answer as for a task that never existed', async () => {
    const gw = await startGateway();
    const created = await callTool(gw, 'alice', 'slow_sum', { a: 1, b: 1, ms: 200 });
    const theirs = await client(gw, 'bob')
      .request('tasks/get', { taskId: created.taskId })
      .catch((err: unknown) => err);
    const none = await client(gw, 'bob')
      .request('tasks/get', { taskId: 'task_neverExisted00000000000000000000' })
      .catch((err: unknown) => err);
    expect(theirs).toBeInstanceOf(Error);
    expect((theirs as { code?: unknown }).code).toBe((none as { code?: unknown }).code);
    expect((theirs as Error).message.replace(String(created.taskId), 'ID')).toBe(
      (none as Error).message.replace('task_neverExisted00000000000000000000', 'ID'),
    );
    const cancel = await client(gw, 'bob')
      .request('tasks/cancel', { taskId: created.taskId })
      .catch((err: unknown) => err);
    expect(cancel).toBeInstanceOf(Error);
    await settled(gw, created.taskId as string, ['completed']);
  });

  it('tells the upstream of a cancel (notifications/cancelled), and the task ends cancelled', async () => {
    const gw = await startGateway();
    const created = await callTool(gw, 'alice', 'send_payment', { to: 'bob', cents: 5, ms: 60_000 });
    await waitUntil(async () => upstreamCalls('send_payment').length === 1, 'the call upstream');
    await client(gw, 'alice').request('tasks/cancel', { taskId: created.taskId });
    await settled(gw, created.taskId as string, ['cancelled']);
    await waitUntil(
      async () => existsSync(cancels()) && readFileSync(cancels(), 'utf8').trim() !== '',
      'the cancel upstream',
    );
  });

  it('after a SIGKILL mid-call, sends an idempotent call again: the upstream counts 2, the client sees one result', async () => {
    const first = await startGateway();
    const created = await callTool(first, 'alice', 'slow_sum', { a: 2, b: 3, ms: 2_000 });
    await waitUntil(async () => upstreamCalls('slow_sum').length === 1, 'the call upstream');
    first.child.kill('SIGKILL');
    await first.exited;
    const second = await startGateway();
    const done = await settled(second, created.taskId as string, ['completed']);
    expect(done.result).toMatchObject(SUM);
    expect(upstreamCalls('slow_sum')).toHaveLength(2);
  });

  it('after a SIGKILL mid-call, ends a non-idempotent call "outcome unknown" without sending it again; an operator retry completes it, or records the outcome they checked', async () => {
    const first = await startGateway();
    const created = await callTool(first, 'alice', 'send_payment', { to: 'carol', cents: 700, ms: 2_000 });
    await waitUntil(async () => upstreamCalls('send_payment').length === 1, 'the call upstream');
    first.child.kill('SIGKILL');
    await first.exited;
    const second = await startGateway();
    const failed = await settled(second, created.taskId as string, ['failed']);
    expect(failed.error).toMatchObject({
      code: -32603,
      message: expect.stringMatching(/^outcome unknown: the upstream may have done this/),
      data: { outcome: 'unknown', tool: 'send_payment' },
    });
    // Let the first upstream process finish what it was doing: still one call in all.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(upstreamCalls('send_payment')).toHaveLength(1);
    // An operator who checked decides to send it again: a new task, linked to this one.
    const retried = await operatorRetry(second, String(created.taskId));
    expect(retried.status).toBe(200);
    const again = await settled(second, retried.body.taskId as string, ['completed']);
    expect(again.result).toMatchObject({ content: [{ type: 'text', text: 'paid 700 to carol' }] });
    expect(upstreamCalls('send_payment')).toHaveLength(2);
    // Or an operator who checked that the first call was done records its outcome: the new task takes it as the
    // upstream call's value and completes without calling the upstream.
    const recorded = { content: [{ type: 'text', text: 'paid 700 to carol (checked by ops)' }] };
    const cli = spawn(
      process.execPath,
      [
        BIN,
        'admin',
        'tasks',
        'retry',
        String(created.taskId),
        '--record-step',
        'upstream',
        '--value',
        JSON.stringify(recorded),
        '--output',
        'json',
        '--url',
        second.url,
      ],
      { env: { ...process.env, DURABLE_MCP_TOKEN: TOKENS.opsA }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    cli.stdout.on('data', (c: Buffer) => (out += c.toString()));
    expect(await new Promise((resolve) => cli.on('exit', resolve))).toBe(0);
    const made = (JSON.parse(out) as Json).taskId as string;
    const settledRecorded = await settled(second, made, ['completed']);
    expect(settledRecorded.result).toMatchObject(recorded);
    expect(upstreamCalls('send_payment')).toHaveLength(2);
  });

  it('starts a crashed upstream again; the call it was serving ends "outcome unknown", the next one works', async () => {
    const gw = await startGateway();
    const created = await callTool(gw, 'alice', 'send_payment', {
      to: 'dan',
      cents: 1,
      ms: 300,
      crash: true,
    });
    const failed = await settled(gw, created.taskId as string, ['failed']);
    expect(failed.error).toMatchObject({ code: -32603, data: { outcome: 'unknown' } });
    const next = await callTool(gw, 'alice', 'slow_sum', { a: 2, b: 3, ms: 0 });
    const done = await settled(gw, next.taskId as string, ['completed']);
    expect(done.result).toMatchObject(SUM);
    const pids = new Set(upstreamCalls().map((c) => c.pid));
    expect(pids.size).toBe(2);
    // Operators see it in the metrics: one call lost, one answered, a session open again.
    const metrics = await (await fetch(`${gw.origin}/metrics`)).text();
    expect(metrics).toMatch(/^durable_mcp_upstream_calls_total\{upstream="node",outcome="lost"\} 1$/m);
    expect(metrics).toMatch(/^durable_mcp_upstream_calls_total\{upstream="node",outcome="ok"\} 1$/m);
    expect(metrics).toMatch(/^durable_mcp_upstream_up\{upstream="node"\} 1$/m);
    expect(metrics).toMatch(/^durable_mcp_upstream_call_duration_seconds_count\{upstream="node"\} 2$/m);
  });

  it('spreads calls over a pool of upstream processes (--upstream-pool)', async () => {
    const gw = await startGateway(['--upstream-pool', '2']);
    const created = await Promise.all(
      [1, 2, 3, 4].map((n) => callTool(gw, 'alice', 'slow_sum', { a: n, b: 0, ms: 600 })),
    );
    for (const task of created) await settled(gw, task.taskId as string, ['completed']);
    const pids = new Set(upstreamCalls('slow_sum').map((c) => c.pid));
    expect(upstreamCalls('slow_sum')).toHaveLength(4);
    expect(pids.size).toBe(2);
  });

  it('gives each principal a session (a process) of their own with --upstream-session per-principal', async () => {
    const gw = await startGateway(['--upstream-session', 'per-principal']);
    const run = async (who: 'alice' | 'bob', a: number): Promise<void> => {
      const created = await callTool(gw, who, 'slow_sum', { a, b: 0, ms: 0 });
      await completedAs(gw, who, created.taskId as string);
    };
    await run('alice', 1);
    await run('bob', 2);
    await run('alice', 3);
    const pidOf = (a: number) => upstreamCalls('slow_sum').find((c) => (c.args as Json).a === a)?.pid;
    expect(pidOf(1)).toBeDefined();
    expect(pidOf(1)).toBe(pidOf(3));
    expect(pidOf(2)).not.toBe(pidOf(1));
  });

  it('passes an upstream tool error through as the tool error it is', async () => {
    const gw = await startGateway();
    const created = await callTool(gw, 'alice', 'fail', { why: 'nope' });
    const done = await settled(gw, created.taskId as string, ['completed']);
    expect(done.result).toMatchObject({ isError: true, content: [{ type: 'text', text: 'failed: nope' }] });
  });

  it('serves a client without the tasks extension: a hand-back after the budget, then the result through task_status', async () => {
    const gw = await startGateway(['--fallback-budget-ms', '300']);
    const plain = client(gw, 'alice', false);
    const { result } = await plain.request('tools/call', {
      name: 'slow_sum',
      arguments: { a: 2, b: 3, ms: 2_000 },
    });
    const handBack = (result as Json).structuredContent as Json;
    expect(handBack.next).toMatchObject({ tool: 'task_status', arguments: { taskId: handBack.taskId } });
    const end = Date.now() + 20_000;
    let report: Json = {};
    while (Date.now() < end) {
      report = (
        await plain.request('tools/call', { name: 'task_status', arguments: { taskId: handBack.taskId } })
      ).result as Json;
      if ((report.structuredContent as Json | undefined)?.status === 'completed') break;
    }
    expect((report.structuredContent as Json).result).toMatchObject(SUM);
  });

  it('refuses at start an upstream tool named like a facade tool, and serves it under --tool-prefix', async () => {
    const refused = spawn(
      process.execPath,
      [
        BIN,
        'gateway',
        '--upstream',
        `stdio:node ${UPSTREAM}`,
        '--upstream-env',
        'UPSTREAM_EXTRA_TOOL',
        '--store',
        join(at.dir, 'refused.db'),
        '--port',
        '0',
      ],
      { stdio: 'pipe', env: { ...process.env, UPSTREAM_EXTRA_TOOL: 'task_status' } },
    );
    let stderr = '';
    refused.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => refused.on('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toMatch(/"task_status".*--tool-prefix/s);
    const gw = await startGateway(['--tool-prefix', 'up_'], undefined, {
      UPSTREAM_EXTRA_TOOL: 'task_status',
    });
    // As a client without the extension sees them: the facade tools too.
    const { result } = await client(gw, 'alice', false).request('tools/list', {});
    const names = ((result as Json).tools as Json[]).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['up_slow_sum', 'up_task_status', 'task_status']));
  });
});

describe('input an SDK v1 upstream asks for during a call (stdio)', () => {
  const QUESTION = 'Send the report?';

  /** Calls `ask` as a task from a client that can answer elicitation, and waits until the task asks. */
  async function asked(gw: ServeProcess, args: Json = {}): Promise<{ taskId: string; waiting: Json }> {
    const { result } = await askingClient(gw, 'alice').request('tools/call', {
      name: 'ask',
      arguments: { question: QUESTION, ...args },
    });
    const taskId = (result as Json).taskId as string;
    return { taskId, waiting: await settled(gw, taskId, ['input_required']) };
  }

  it("becomes the task's input_required with the upstream's request; a bad answer is refused, a good one completes the call", async () => {
    const gw = await startGateway();
    const { taskId, waiting } = await asked(gw);
    expect(waiting.inputRequests).toEqual({
      elicitation: {
        method: 'elicitation/create',
        params: expect.objectContaining({
          message: QUESTION,
          requestedSchema: expect.objectContaining({ required: ['ok'] }),
        }),
      },
    });
    const bad = await askingClient(gw, 'alice')
      .request('tasks/update', {
        taskId,
        inputResponses: { elicitation: { action: 'accept', content: { ok: 'yes' } } },
      })
      .catch((err: unknown) => err);
    expect((bad as { code?: unknown }).code).toBe(-32602);
    expect((await settled(gw, taskId, ['input_required'])).inputRequests).toHaveProperty('elicitation');
    await askingClient(gw, 'alice').request('tasks/update', {
      taskId,
      inputResponses: { elicitation: { action: 'accept', content: { ok: true } } },
    });
    const done = await settled(gw, taskId, ['completed', 'failed']);
    expect(done.result).toMatchObject({
      content: [{ type: 'text', text: `${QUESTION}: accept {"ok":true}` }],
    });
    expect(upstreamCalls('ask')).toHaveLength(1);
  });

  it('fails the task saying so when the upstream stops waiting for the answer and then fails the call', async () => {
    const gw = await startGateway();
    const { taskId } = await asked(gw, { timeoutMs: 1_500 });
    // The upstream gives up: its request is withdrawn from the task.
    const failed = await settled(gw, taskId, ['failed', 'completed'], [], 10_000);
    expect(failed.error).toMatchObject({
      code: -32603,
      message: expect.stringMatching(
        /^the upstream stopped waiting for the answer to its elicitation\/create/,
      ),
      data: { outcome: 'input_abandoned', tool: 'ask' },
    });
    const late = await askingClient(gw, 'alice')
      .request('tasks/update', {
        taskId,
        inputResponses: { elicitation: { action: 'accept', content: { ok: true } } },
      })
      .catch((err: unknown) => err);
    expect(late).not.toBeInstanceOf(Error);
    expect((await settled(gw, taskId, ['failed'])).status).toBe('failed');
  });

  it('passes on a roots/list request, and refuses one the caller has no capability for with an error saying so', async () => {
    const gw = await startGateway();
    const { result } = await createHttpClient({
      url: gw.url,
      token: TOKENS.alice,
      capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} }, roots: {} },
    }).request('tools/call', { name: 'roots', arguments: {} });
    const taskId = (result as Json).taskId as string;
    const waiting = await settled(gw, taskId, ['input_required']);
    expect(waiting.inputRequests).toEqual({ roots: { method: 'roots/list', params: {} } });
    await gatewayClient(gw, 'alice').request('tasks/update', {
      taskId,
      inputResponses: { roots: { roots: [{ uri: 'file:///work', name: 'work' }] } },
    });
    const done = await settled(gw, taskId, ['completed', 'failed']);
    expect(done.result).toMatchObject({ content: [{ type: 'text', text: 'file:///work' }] });
    // A caller that declared no elicitation: the upstream is told, and its tool error is the task's result.
    const plain = await callTool(gw, 'alice', 'ask', { question: QUESTION });
    const refused = await settled(gw, plain.taskId as string, ['completed', 'failed']);
    expect(refused.result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringMatching(/client capability for elicitation\/create/) }],
    });
  });

  it("bounds the wait by the gateway's call timeout: the request is withdrawn and the call counts as lost", async () => {
    const gw = await startGateway(['--upstream-timeout-ms', '2000']);
    const { taskId } = await asked(gw);
    const failed = await settled(gw, taskId, ['failed'], [], 15_000);
    expect(failed.error).toMatchObject({
      code: -32603,
      data: { outcome: 'unknown', tool: 'ask', reason: expect.stringMatching(/did not answer in time/) },
    });
    expect(failed.inputRequests ?? {}).toEqual({});
  });

  it("refuses the upstream's request during a call that is not a task (--sync-tools): the upstream gets an error saying why", async () => {
    const gw = await startGateway(['--sync-tools', 'ask']);
    const { result } = await askingClient(gw, 'alice').request('tools/call', {
      name: 'ask',
      arguments: { question: QUESTION },
    });
    expect(result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringMatching(/not a task/) }],
    });
  });

  it('after a SIGKILL of the gateway while the task waits for the answer, ends the call "outcome unknown" on the next', async () => {
    const first = await startGateway();
    const { taskId } = await asked(first);
    first.child.kill('SIGKILL');
    await first.exited;
    const second = await startGateway();
    const failed = await settled(second, taskId, ['failed'], [], 30_000);
    expect(failed.error).toMatchObject({ code: -32603, data: { outcome: 'unknown', tool: 'ask' } });
    expect(upstreamCalls('ask')).toHaveLength(1);
  });
});

describe('durable-mcp gateway in front of an SDK v1 server over Streamable HTTP', () => {
  it('serves its tools as tasks and completes with the exact result', async () => {
    const upstream = await startListening([UPSTREAM, '--http', '0'], { env: upstreamEnv(at) });
    procs.push(upstream);
    const gw = await startGateway([], upstream.url);
    const note = 'warming up the adder';
    const created = await callTool(gw, 'alice', 'slow_sum', { a: 2, b: 3, ms: 1_200, note });
    expect(created).toMatchObject({ resultType: 'task' });
    const seen: string[] = [];
    const done = await settled(gw, created.taskId as string, ['completed'], seen);
    expect(done.result).toMatchObject(SUM);
    // The upstream's log message about the call, taken from the call's response stream, then its progress.
    expect(seen.indexOf(note)).toBeGreaterThanOrEqual(0);
    expect(seen.findIndex((m) => /step \d of 2/.test(m))).toBeGreaterThan(seen.indexOf(note));
    expect(upstreamCalls('slow_sum')).toHaveLength(1);
  });

  it("calls with the token of the caller's tenant (--upstream-tenant-tokens), and the default token otherwise", async () => {
    const upstream = await startListening([UPSTREAM, '--http', '0'], { env: upstreamEnv(at) });
    procs.push(upstream);
    // alice is in tenant A, bob in B (test/support/admin-api.ts).
    writeFileSync(join(at.dir, 'tenant-tokens.json'), JSON.stringify({ A: 'token-of-a' }));
    const gw = await startGateway(
      [
        '--upstream-tenant-tokens',
        join(at.dir, 'tenant-tokens.json'),
        '--upstream-token-env',
        'GW_UPSTREAM_TOKEN',
      ],
      upstream.url,
      { GW_UPSTREAM_TOKEN: 'token-of-the-gateway' },
    );
    for (const [who, a] of [
      ['alice', 1],
      ['bob', 2],
    ] as const) {
      const created = await callTool(gw, who, 'slow_sum', { a, b: 0, ms: 0 });
      await completedAs(gw, who, created.taskId as string);
    }
    const authOf = (a: number) =>
      upstreamCalls('slow_sum').find((c) => (c.args as Json).a === a)?.authorization;
    expect(authOf(1)).toBe('Bearer token-of-a');
    expect(authOf(2)).toBe('Bearer token-of-the-gateway');
  });

  it('notices an upstream SIGKILLed mid-call and started again on its port: lost calls follow the delivery rules, later ones go to a new session', async () => {
    const upstreamAt = (port: string) =>
      startListening([UPSTREAM, '--http', port], { env: upstreamEnv(at) }).then((p) => (procs.push(p), p));
    const first = await upstreamAt('0');
    const port = new URL(first.url).port;
    const gw = await startGateway([], first.url);
    const sum = await callTool(gw, 'alice', 'slow_sum', { a: 2, b: 3, ms: 3_000 });
    const pay = await callTool(gw, 'alice', 'send_payment', { to: 'erin', cents: 9, ms: 3_000 });
    await waitUntil(async () => upstreamCalls().length === 2, 'both calls upstream');
    first.child.kill('SIGKILL');
    await first.exited;
    await upstreamAt(port);
    // Bounded far below the call timeout (one hour): the calls out on the dead session are noticed as lost.
    const failed = await settled(gw, pay.taskId as string, ['failed'], [], 15_000);
    expect(failed.error).toMatchObject({ code: -32603, data: { outcome: 'unknown', tool: 'send_payment' } });
    const done = await settled(gw, sum.taskId as string, ['completed'], [], 15_000);
    expect(done.result).toMatchObject(SUM);
    expect(upstreamCalls('slow_sum')).toHaveLength(2);
    // A call made while the upstream is down was not taken: it goes out once the upstream is back, exactly once.
    const second = procs[procs.length - 1] as ServeProcess;
    second.child.kill('SIGKILL');
    await second.exited;
    const later = await callTool(gw, 'alice', 'send_payment', { to: 'erin', cents: 10, ms: 0 });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await upstreamAt(port);
    const paid = await settled(gw, later.taskId as string, ['completed'], [], 15_000);
    expect(paid.result).toMatchObject({ content: [{ type: 'text', text: 'paid 10 to erin' }] });
    expect(upstreamCalls('send_payment').map((c) => (c.args as Json).cents)).toEqual([9, 10]);
  });

  it('starts before its upstream: serves without its tools after the connect timeout, and serves and calls them once it answers', async () => {
    const port = await freePort();
    // It waits that long for the upstream to answer at start, then serves without its tools.
    const gw = await startGateway(['--upstream-connect-timeout-ms', '1000'], `http://127.0.0.1:${port}/mcp`);
    // Its log goes to stderr, which may reach the test after its listening line on stdout.
    await waitUntil(async () => /the upstream does not answer/.test(gw.stderr()), 'the warning logged');
    const names = async (): Promise<string[]> => {
      const { result } = await client(gw, 'alice').request('tools/list', {});
      return ((result as Json).tools as Json[]).map((t) => t.name as string);
    };
    expect(await names()).not.toContain('slow_sum');
    // A call of a tool it does not know yet may be the upstream's: an error to try again on, not "Unknown tool".
    const call = (name: string) =>
      client(gw, 'alice').request('tools/call', { name, arguments: { a: 1, b: 2 } });
    const notYet = {
      code: -32603,
      httpStatus: 500,
      message: expect.stringMatching(/^Upstream unavailable: /),
    };
    await expect(call('slow_sum')).rejects.toMatchObject(notYet);
    await expect(call('no_such_tool')).rejects.toMatchObject(notYet);
    procs.push(await startListening([UPSTREAM, '--http', String(port)], { env: upstreamEnv(at) }));
    // Read again 1 s after the first failure, doubling: well within 20 s of the upstream starting.
    await waitUntil(async () => (await names()).includes('slow_sum'), "the upstream's tools served", 20_000);
    await waitUntil(async () => /upstream tool served/.test(gw.stderr()), 'the tools logged as served');
    await expect(call('no_such_tool')).rejects.toMatchObject({
      code: -32602,
      message: 'Unknown tool: no_such_tool',
    });
    const created = await callTool(gw, 'alice', 'slow_sum', { a: 2, b: 3, ms: 0 });
    const done = await settled(gw, created.taskId as string, ['completed'], [], 15_000);
    expect(done.result).toMatchObject(SUM);
  }, 60_000);
  it("started again while its upstream is down, leaves the upstream's tasks in the store alone until it answers, then finishes them", async () => {
    const upstreamAt = (port: string) =>
      startListening([UPSTREAM, '--http', port], { env: upstreamEnv(at) }).then((p) => (procs.push(p), p));
    const up = await upstreamAt('0');
    const port = new URL(up.url).port;
    // A removed tool's tasks are failed 100 ms after their last change: the upstream's must not count as removed.
    const extra = ['--removed-tool-drain-ms', '100', '--upstream-connect-timeout-ms', '1000'];
    const first = await startGateway(extra, up.url);
    const sum = await callTool(first, 'alice', 'slow_sum', { a: 2, b: 3, ms: 6_000 });
    await waitUntil(async () => upstreamCalls('slow_sum').length === 1, 'the call upstream');
    first.child.kill('SIGKILL');
    up.child.kill('SIGKILL');
    await Promise.all([first.exited, up.exited]);
    const second = await startGateway(extra, up.url);
    // Well past the drain and the lease, with the worker polling: the task is still the upstream's to finish.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const { result } = await client(second, 'alice').request('tasks/get', { taskId: sum.taskId });
    expect(result).toMatchObject({ status: 'working' });
    await upstreamAt(port);
    const done = await settled(second, sum.taskId as string, ['completed', 'failed'], [], 30_000);
    expect(done).toMatchObject({ status: 'completed', result: SUM });
  }, 90_000);
});

describe('durable-mcp gateway --stdio', () => {
  it('serves the upstream over its own stdin and stdout, with nothing but JSON-RPC on stdout, and exits at EOF', async () => {
    const child = spawn(
      process.execPath,
      [
        BIN,
        'gateway',
        '--stdio',
        '--upstream',
        `stdio:node ${UPSTREAM}`,
        '--upstream-env',
        'UPSTREAM_CALLS',
        '--store',
        join(at.dir, 'stdio.db'),
      ],
      { stdio: 'pipe', env: { ...process.env, ...upstreamEnv(at) } },
    );
    const lines: string[] = [];
    createInterface({ input: child.stdout }).on('line', (line) => lines.push(line));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.stdin.write(
      `${JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'slow_sum', arguments: { a: 2, b: 3, ms: 0 }, _meta: envelope() },
      })}\n`,
    );
    await waitUntil(async () => lines.length > 0, 'the answer');
    child.stdin.end();
    expect(await exited).toBe(0);
    const replies = lines.map((line) => JSON.parse(line) as Json);
    expect(replies).toEqual([{ jsonrpc: '2.0', id: 1, result: expect.objectContaining(SUM) }]);
    expect(upstreamCalls('slow_sum')).toHaveLength(1);
  });
});
