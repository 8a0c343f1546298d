// `durable-mcp gateway` in front of a 2026-07-28 upstream (`durable-mcp serve`), over real processes: the gateway finds
// it with server/discover and speaks to it without a session; a call the upstream answers with a task of its own is
// followed to the end (its id recorded, so a gateway SIGKILL or restart resumes following it and the upstream counts
// one call), a cancel reaches it, its status shows, an operator's retry sends the call anew, and its input (a task's
// input_required, or an MRTR round) becomes the gateway task's input, answered with tasks/update on the gateway.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../src/advanced.js';
import { TOKENS, tokenFile, waitUntil } from '../support/admin-api.js';
import { operatorRetry } from '../support/gateway.js';
import { BIN, killedAfterEach, startListening, startServe, type ServeProcess } from '../support/cli.js';

type Json = Record<string, unknown>;

const TOOLS = fileURLToPath(new URL('../fixtures/gateway/upstream-modern.mjs', import.meta.url));
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const ASKING = { ...TASKS, elicitation: {} };
const LEASE_MS = 1_500;

let dir: string;
let calls: string;
let cancels: string;
const procs = killedAfterEach();

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'durable-mcp-gateway-modern-'));
  calls = join(dir, 'calls.log');
  cancels = join(dir, 'cancels.log');
  writeFileSync(join(dir, 'tokens.json'), tokenFile(true));
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

const lines = (file: string): Json[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Json)
    : [];

/** Whether process `pid` is still running. */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** What reached the upstream: one record per call it took on. */
const upstreamCalls = (tool: string): Json[] => lines(calls).filter((c) => c.tool === tool);

/** The upstream: `durable-mcp serve` with the fixture tools, anonymous, on its own SQLite file. */
async function startUpstream(): Promise<ServeProcess> {
  const proc = await startServe(
    ['--tools', TOOLS, '--store', join(dir, 'upstream.db'), '--port', '0', '--tasks-get-rate', '0'],
    20_000,
    { UPSTREAM_CALLS: calls, UPSTREAM_CANCELS: cancels },
  );
  procs.push(proc);
  return proc;
}

/**
 * A gateway in front of `upstream` (a running upstream, or the spec of one it runs itself, e.g. `stdio:…`), on the
 * test's SQLite file.
 */
async function startGateway(
  upstream: ServeProcess | string,
  extra: string[] = [],
  env: Record<string, string> = {},
): Promise<ServeProcess> {
  const proc = await startListening(
    [
      BIN,
      'gateway',
      ...extra,
      '--upstream',
      typeof upstream === 'string' ? upstream : upstream.url,
      '--store',
      join(dir, 'gateway.db'),
      '--port',
      '0',
      '--auth',
      join(dir, 'tokens.json'),
      '--tasks-get-rate',
      '0',
      '--lease-ms',
      String(LEASE_MS),
      '--shutdown-grace-ms',
      '200',
      '--log-level',
      'info',
    ],
    { timeoutMs: 20_000, env },
  );
  procs.push(proc);
  return proc;
}

const gatewayClient = (proc: ServeProcess, capabilities: Json = ASKING) =>
  createHttpClient({ url: proc.url, token: TOKENS.alice, capabilities });

/** The upstream, as anyone may call it (it runs without authentication). */
const upstreamClient = (proc: ServeProcess, capabilities: Json = TASKS) =>
  createHttpClient({ url: proc.url, capabilities });

async function callTool(proc: ServeProcess, name: string, args: Json): Promise<Json> {
  return (await gatewayClient(proc).request('tools/call', { name, arguments: args })).result as Json;
}

/** Polls tasks/get (on the gateway, or on the upstream with `upstream`) until the task is in one of `statuses`. */
async function settled(
  proc: ServeProcess,
  taskId: string,
  statuses: string[],
  seen: string[] = [],
  upstream = false,
): Promise<Json> {
  const client = upstream ? upstreamClient(proc) : gatewayClient(proc);
  const end = Date.now() + 30_000;
  for (;;) {
    const task = (await client.request('tasks/get', { taskId })).result as Json;
    if (typeof task.statusMessage === 'string') seen.push(task.statusMessage);
    if (statuses.includes(String(task.status))) return task;
    if (Date.now() > end) throw new Error(`task ${taskId}: ${JSON.stringify(task)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A result as both servers give it, without what names the server (each puts its own serverInfo in `_meta`). */
const withoutMeta = (result: unknown): Json => {
  const { _meta: _ignored, ...rest } = result as Json;
  return rest;
};

/** The upstream's audit events (`task.created`, `task.joined`, `task.answered`, …) of a tool or one of its tasks. */
const audits = (upstream: ServeProcess, tool: string, taskId?: unknown): string[] =>
  `${upstream.stdout()}\n${upstream.stderr()}`
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes('"type":"audit"'))
    .map((line) => JSON.parse(line) as Json)
    .filter((event) => event.tool === tool || (taskId !== undefined && event.taskId === taskId))
    .map((event) => String(event.event));

describe('durable-mcp gateway in front of a 2026-07-28 upstream (durable-mcp serve)', () => {
  it('speaks to it without a session, follows its task, shows its progress, and completes with its exact result', async () => {
    const upstream = await startUpstream();
    const gw = await startGateway(upstream);
    expect(`${gw.stdout()}${gw.stderr()}`).toMatch(/upstream speaks 2026-07-28/);
    const created = await callTool(gw, 'slow_sum', { a: 2, b: 3, ms: 1_500 });
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    const seen: string[] = [];
    const done = await settled(gw, created.taskId as string, ['completed'], seen);
    // The same result the upstream gives a direct call, field for field.
    const direct = (
      await upstreamClient(upstream, {}).request('tools/call', {
        name: 'slow_sum',
        arguments: { a: 2, b: 3, ms: 0 },
      })
    ).result;
    expect(withoutMeta(done.result)).toEqual(withoutMeta(direct));
    expect(withoutMeta(done.result)).toEqual({
      resultType: 'complete',
      content: [{ type: 'text', text: '5' }],
      structuredContent: { sum: 5 },
    });
    expect(seen.some((m) => /^step \d of 3/.test(m))).toBe(true);
    // The upstream ran it as a task of its own (the gateway declared the extension), once.
    const [sent] = upstreamCalls('slow_sum');
    expect(sent).toMatchObject({ args: { a: 2, b: 3, ms: 1_500 }, taskId: expect.any(String) });
  });

  it('after a SIGKILL of the gateway while the upstream task runs, follows the same task again: one call upstream', async () => {
    const upstream = await startUpstream();
    const first = await startGateway(upstream);
    const created = await callTool(first, 'transfer', { to: 'carol', cents: 700, ms: 4_000 });
    const taskId = created.taskId as string;
    // Following has begun (the upstream's progress shows), so the upstream task's id is recorded.
    await waitUntil(async () => {
      const task = (await gatewayClient(first).request('tasks/get', { taskId })).result as Json;
      return /^step \d of 4/.test(String(task.statusMessage));
    }, 'the upstream progress on the gateway task');
    first.child.kill('SIGKILL');
    await first.exited;
    const second = await startGateway(upstream);
    const done = await settled(second, taskId, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(withoutMeta(done.result)).toEqual({
      resultType: 'complete',
      content: [{ type: 'text', text: 'moved 700 to carol' }],
    });
    expect(upstreamCalls('transfer')).toHaveLength(1);
    // No second tools/call reached it either (a repeat with the key would have joined the task).
    expect(audits(upstream, 'transfer')).toEqual(['task.created']);
  });

  it('leaves the upstream task running when the gateway stops gracefully; the next gateway follows it to the end', async () => {
    const upstream = await startUpstream();
    const first = await startGateway(upstream);
    const created = await callTool(first, 'transfer', { to: 'erin', cents: 9, ms: 3_000 });
    const taskId = created.taskId as string;
    await waitUntil(async () => {
      const task = (await gatewayClient(first).request('tasks/get', { taskId })).result as Json;
      return /^step \d of 3/.test(String(task.statusMessage));
    }, 'the upstream progress on the gateway task');
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    const upstreamTaskId = upstreamCalls('transfer')[0]?.taskId as string;
    const running = (await upstreamClient(upstream).request('tasks/get', { taskId: upstreamTaskId })).result;
    expect(running).toMatchObject({ status: 'working' });
    const second = await startGateway(upstream);
    const done = await settled(second, taskId, ['completed', 'failed']);
    expect(withoutMeta(done.result)).toEqual({
      resultType: 'complete',
      content: [{ type: 'text', text: 'moved 9 to erin' }],
    });
    expect(lines(cancels)).toEqual([]);
    expect(audits(upstream, 'transfer', upstreamTaskId)).toEqual(['task.created']);
    // Operators see where the call stood: the upstream answered it with a task of its own, which was followed.
    const detail = (await fetch(`${second.origin}/admin/api/v1/tasks/${taskId}`, {
      headers: { authorization: `Bearer ${TOKENS.opsA}` },
    }).then((res) => res.json())) as Json;
    expect(detail.upstream).toEqual({
      upstream: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/),
      dispatch: 'following',
      step: 'upstream',
      upstreamTaskId,
    });
  });

  it('cancels the upstream task when the gateway task is cancelled', async () => {
    const upstream = await startUpstream();
    const gw = await startGateway(upstream);
    const created = await callTool(gw, 'transfer', { to: 'dan', cents: 1, ms: 60_000 });
    await waitUntil(async () => upstreamCalls('transfer').length === 1, 'the call upstream');
    const upstreamTaskId = upstreamCalls('transfer')[0]?.taskId as string;
    await gatewayClient(gw).request('tasks/cancel', { taskId: created.taskId });
    await settled(gw, created.taskId as string, ['cancelled']);
    await settled(upstream, upstreamTaskId, ['cancelled'], [], true);
    await waitUntil(async () => lines(cancels).length === 1, 'the upstream run stopped');
    expect(lines(cancels)[0]).toMatchObject({ taskId: upstreamTaskId });
  });

  it('ends the gateway task failed when someone else cancels the upstream task; an operator retry sends the call anew', async () => {
    const upstream = await startUpstream();
    const gw = await startGateway(upstream);
    const created = await callTool(gw, 'transfer', { to: 'fay', cents: 3, ms: 2_000 });
    await waitUntil(async () => upstreamCalls('transfer').length === 1, 'the call upstream');
    const first = upstreamCalls('transfer')[0]?.taskId as string;
    await upstreamClient(upstream).request('tasks/cancel', { taskId: first });
    const failed = await settled(gw, created.taskId as string, ['failed']);
    expect(failed.error).toMatchObject({
      code: -32603,
      message: 'the upstream cancelled its task',
      data: { outcome: 'cancelled', tool: 'transfer', upstreamTaskId: first },
    });
    // An operator's retry starts from the failed task's steps, its upstream task among them: not followed again.
    const retried = await operatorRetry(gw, String(created.taskId));
    expect(retried.status).toBe(200);
    const done = await settled(gw, retried.body.taskId as string, ['completed', 'failed']);
    expect(withoutMeta(done.result)).toEqual({
      resultType: 'complete',
      content: [{ type: 'text', text: 'moved 3 to fay' }],
    });
    const sent = upstreamCalls('transfer');
    expect(sent).toHaveLength(2);
    expect(sent[1]?.taskId).not.toBe(first);
  });

  it("makes the upstream task's input the gateway task's input; the answer on the gateway completes both", async () => {
    const upstream = await startUpstream();
    const gw = await startGateway(upstream);
    const created = await callTool(gw, 'approve', { what: 'the release' });
    const asking = await settled(gw, created.taskId as string, ['input_required']);
    // The same request the upstream asks, under the same key.
    expect(asking.inputRequests).toEqual({
      confirm: {
        method: 'elicitation/create',
        params: {
          message: 'Go ahead with the release?',
          requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
        },
      },
    });
    await gatewayClient(gw).request('tasks/update', {
      taskId: created.taskId,
      inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
    });
    const done = await settled(gw, created.taskId as string, ['completed', 'failed']);
    expect(withoutMeta(done.result)).toEqual({
      resultType: 'complete',
      content: [{ type: 'text', text: 'the release: accept true' }],
    });
    const [sent] = upstreamCalls('approve');
    expect(upstreamCalls('approve')).toHaveLength(1);
    // One call and one answer reached the upstream.
    expect(audits(upstream, 'approve', sent?.taskId)).toEqual(['task.created', 'task.answered']);
  });

  it("tells the upstream of a cancel that comes while the gateway task waits for its caller's input: its task ends cancelled too", async () => {
    const upstream = await startUpstream();
    const gw = await startGateway(upstream);
    const created = await callTool(gw, 'approve', { what: 'the migration' });
    await settled(gw, created.taskId as string, ['input_required']);
    const upstreamTaskId = upstreamCalls('approve')[0]?.taskId as string;
    expect(
      (await upstreamClient(upstream).request('tasks/get', { taskId: upstreamTaskId })).result,
    ).toMatchObject({ status: 'input_required' });
    // No run holds the gateway task now: the cancel ends it at once.
    await gatewayClient(gw).request('tasks/cancel', { taskId: created.taskId });
    expect(await settled(gw, created.taskId as string, ['cancelled', 'completed', 'failed'])).toMatchObject({
      status: 'cancelled',
    });
    const upstreamTask = await settled(
      upstream,
      upstreamTaskId,
      ['cancelled', 'completed', 'failed'],
      [],
      true,
    );
    expect(upstreamTask.status).toBe('cancelled');
    await waitUntil(
      async () => /the upstream task of a cancelled task was cancelled/.test(`${gw.stdout()}${gw.stderr()}`),
      'the gateway logging that it cancelled the upstream task',
    );
  });

  it("makes an upstream MRTR round the gateway task's input, and sends the answer as the next round", async () => {
    const upstream = await startUpstream();
    const gw = await startGateway(upstream);
    const created = await callTool(gw, 'approve_now', { what: 'the deploy' });
    expect(created).toMatchObject({ resultType: 'task' });
    const asking = await settled(gw, created.taskId as string, ['input_required']);
    expect(Object.keys(asking.inputRequests as Json)).toEqual(['confirm']);
    expect(upstreamCalls('approve_now')).toHaveLength(0);
    await gatewayClient(gw).request('tasks/update', {
      taskId: created.taskId,
      inputResponses: { confirm: { action: 'decline' } },
    });
    const done = await settled(gw, created.taskId as string, ['completed', 'failed']);
    expect(withoutMeta(done.result)).toEqual({
      resultType: 'complete',
      content: [{ type: 'text', text: 'the deploy now: decline undefined' }],
    });
    expect(upstreamCalls('approve_now')).toEqual([expect.objectContaining({ answered: 'decline' })]);
  });

  it("passes the upstream's log messages about a call answered within the request to a caller who asked for them", async () => {
    const upstream = await startUpstream();
    const gw = await startGateway(upstream, ['--sync-tools', 'approve_now']);
    const notes: Json[] = [];
    const reply = await gatewayClient(gw).request(
      'tools/call',
      {
        name: 'approve_now',
        arguments: { what: 'the rollout' },
        _meta: { 'io.modelcontextprotocol/logLevel': 'info' },
      },
      { onNotification: (n) => notes.push(n as Json) },
    );
    expect(reply.result).toMatchObject({ resultType: 'input_required' });
    expect(notes).toContainEqual(
      expect.objectContaining({
        method: 'notifications/message',
        params: { level: 'info', data: 'asking about the rollout', logger: 'approve_now' },
      }),
    );
  });

  it('serves a tool the upstream adds, told by its listen stream', async () => {
    const upstream = await startUpstream();
    const gw = await startGateway(upstream);
    const names = async (): Promise<unknown[]> =>
      (((await gatewayClient(gw).request('tools/list', {})).result as Json).tools as Json[]).map(
        (t) => t.name,
      );
    expect(await names()).not.toContain('late_tool');
    const created = await callTool(gw, 'add_tool', { name: 'late_tool' });
    await settled(gw, created.taskId as string, ['completed']);
    await waitUntil(async () => (await names()).includes('late_tool'), 'the new tool on the gateway');
    const late = await callTool(gw, 'late_tool', {});
    const done = await settled(gw, late.taskId as string, ['completed']);
    expect(withoutMeta(done.result)).toEqual({
      resultType: 'complete',
      content: [{ type: 'text', text: 'late_tool ran' }],
    });
  });
});

describe('durable-mcp gateway in front of a 2026-07-28 upstream over stdio (durable-mcp serve --stdio)', () => {
  /** The gateway, running the upstream as its child processes (`--upstream-pool`), each on the same SQLite file. */
  const startWithStdioUpstream = (pool: number): Promise<ServeProcess> =>
    startGateway(
      `stdio:${process.execPath} ${BIN} serve --stdio --tools ${TOOLS} --store ${join(dir, 'upstream.db')} --lease-ms ${LEASE_MS}`,
      ['--upstream-pool', String(pool), '--upstream-env', 'UPSTREAM_CALLS,UPSTREAM_CANCELS'],
      { UPSTREAM_CALLS: calls, UPSTREAM_CANCELS: cancels },
    );

  it('finds it with server/discover on stdio, follows the task each process answers with, and completes with its exact result', async () => {
    const gw = await startWithStdioUpstream(2);
    const created = await Promise.all([1, 2].map((a) => callTool(gw, 'slow_sum', { a, b: 10, ms: 1_500 })));
    const done = await Promise.all(
      created.map((task) => settled(gw, task.taskId as string, ['completed', 'failed'])),
    );
    expect(done.map((task) => withoutMeta(task.result))).toEqual(
      [11, 12].map((sum) => ({
        resultType: 'complete',
        content: [{ type: 'text', text: String(sum) }],
        structuredContent: { sum },
      })),
    );
    // Spoken to natively: each call ran as a task of the upstream's own (the gateway declared the extension), once,
    // and the two calls went to the pool's two processes, each task followed on the process that holds it.
    expect(`${gw.stdout()}${gw.stderr()}`).toMatch(/upstream speaks 2026-07-28/);
    const sent = upstreamCalls('slow_sum');
    expect(sent).toHaveLength(2);
    expect(sent.every((c) => typeof c.taskId === 'string')).toBe(true);
    expect(new Set(sent.map((c) => c.pid)).size).toBe(2);
    // A gateway killed outright cannot stop its upstream processes: each sees its input end and exits, though the
    // gateway kept a subscriptions/listen stream open on it.
    gw.child.kill('SIGKILL');
    await gw.exited;
    for (const pid of new Set(sent.map((c) => c.pid as number)))
      await waitUntil(async () => !alive(pid), `upstream process ${pid} to exit`, 30_000);
  });

  it("makes an upstream MRTR round over stdio the gateway task's input, and sends the answer as the next round", async () => {
    const gw = await startWithStdioUpstream(1);
    const created = await callTool(gw, 'approve_now', { what: 'the release' });
    const asking = await settled(gw, created.taskId as string, ['input_required']);
    expect(Object.keys(asking.inputRequests as Json)).toEqual(['confirm']);
    await gatewayClient(gw).request('tasks/update', {
      taskId: created.taskId,
      inputResponses: { confirm: { action: 'decline' } },
    });
    const done = await settled(gw, created.taskId as string, ['completed', 'failed']);
    expect(withoutMeta(done.result)).toEqual({
      resultType: 'complete',
      content: [{ type: 'text', text: 'the release now: decline undefined' }],
    });
  });

  it('after a SIGKILL of the gateway (its upstream processes end with it), follows the task on the next process, which resumes it from its store: one call', async () => {
    const first = await startWithStdioUpstream(1);
    const created = await callTool(first, 'transfer', { to: 'dan', cents: 42, ms: 3_000 });
    const taskId = created.taskId as string;
    await waitUntil(async () => {
      const task = (await gatewayClient(first).request('tasks/get', { taskId })).result as Json;
      return /^step \d of 3/.test(String(task.statusMessage));
    }, 'the upstream progress on the gateway task');
    first.child.kill('SIGKILL');
    await first.exited;
    // The upstream process sees its input end and exits, though the gateway that ran it could not stop it.
    const upstreamPid = upstreamCalls('transfer')[0]?.pid as number;
    expect(typeof upstreamPid).toBe('number');
    await waitUntil(async () => !alive(upstreamPid), 'the orphaned upstream process to exit', 30_000);
    const second = await startWithStdioUpstream(1);
    const done = await settled(second, taskId, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(withoutMeta(done.result)).toEqual({
      resultType: 'complete',
      content: [{ type: 'text', text: 'moved 42 to dan' }],
    });
    expect(upstreamCalls('transfer')).toHaveLength(1);
  });
});
