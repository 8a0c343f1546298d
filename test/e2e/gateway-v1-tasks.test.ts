// `durable-mcp gateway` in front of an SDK v1 server with tasks of its own (2025-11-25 `params.task`, kept per session
// in the SDK's InMemoryTaskStore), over real processes: a call of a tool that allows a task becomes a task upstream,
// whose id (and session) is the gateway task's recorded answer. Over Streamable HTTP a SIGKILL of the gateway mid-call
// leaves it running, and the next gateway follows it on the recorded session to the upstream's exact result, with one
// call upstream; a cancel of the gateway task cancels it. Over stdio the task ends with the child process: a gateway
// SIGKILL ends the call "outcome unknown", naming the upstream task.
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TOKENS, waitUntil } from '../support/admin-api.js';
import { startListening, type ServeProcess } from '../support/cli.js';
import {
  callTool,
  gatewayClient,
  gatewayDir,
  settled,
  startGateway,
  upstreamCalls,
  upstreamEnv,
  type GatewayDir,
  type Json,
} from '../support/gateway.js';

const UPSTREAM = fileURLToPath(new URL('../fixtures/gateway/upstream-v1-tasks.mjs', import.meta.url));

let at: GatewayDir;
const procs: ServeProcess[] = [];

beforeEach(() => {
  at = gatewayDir(mkdtempSync(join(tmpdir(), 'durable-mcp-gateway-v1-tasks-')));
});

afterEach(async () => {
  for (const p of procs.splice(0)) {
    p.child.kill('SIGKILL');
    await p.exited;
  }
  rmSync(at.dir, { recursive: true, force: true });
});

/** The upstream tasks the upstream stopped because they were cancelled. */
const cancelled = (): Json[] =>
  existsSync(at.cancels)
    ? readFileSync(at.cancels, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Json)
    : [];

async function httpUpstream(): Promise<ServeProcess> {
  const upstream = await startListening([UPSTREAM, '--http', '0'], { env: upstreamEnv(at) });
  procs.push(upstream);
  return upstream;
}

const gateway = (upstream: string) => startGateway(at, procs, { upstream });

/** The gateway task's steps as an operator sees them (names and whether each is done; never their values). */
async function steps(gw: ServeProcess, taskId: string): Promise<Json[]> {
  const res = await fetch(`${gw.origin}/admin/api/v1/tasks/${taskId}`, {
    headers: { authorization: `Bearer ${TOKENS.opsA}` },
  });
  return ((await res.json()) as { steps: Json[] }).steps;
}

/** Waits until the gateway task follows its upstream task: the upstream's status message shows on it. */
const following = (gw: ServeProcess, taskId: string, pattern: RegExp) =>
  waitUntil(async () => {
    const task = (await gatewayClient(gw, 'alice').request('tasks/get', { taskId })).result as Json;
    return pattern.test(String(task.statusMessage));
  }, 'the upstream task status on the gateway task');

const MOVED = (to: string, cents: number) => ({
  content: [{ type: 'text', text: `moved ${cents} to ${to}` }],
  structuredContent: { to, cents },
});

/**
 * Checks that a gateway result is the upstream's `expected` exactly: its `_meta` holds only the gateway's serverInfo
 * (not the related-task key tasks/result adds upstream).
 */
function expectExact(result: unknown, expected: Json): void {
  const { _meta: meta, ...rest } = result as Json;
  expect(rest).toEqual({ resultType: 'complete', ...expected });
  expect(Object.keys((meta ?? {}) as Json)).toEqual(['io.modelcontextprotocol/serverInfo']);
}

describe('durable-mcp gateway in front of an SDK v1 server with tasks, over Streamable HTTP', () => {
  it('after a SIGKILL of the gateway mid-call, follows the recorded upstream task on its session: one call upstream', async () => {
    const upstream = await httpUpstream();
    const first = await gateway(upstream.url);
    const created = await callTool(first, 'alice', 'transfer', { to: 'carol', cents: 700, ms: 4_000 });
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    const taskId = created.taskId as string;
    await following(first, taskId, /^step \d of 4$/);
    // The upstream's answer (its task) is the call's recorded step.
    expect(await steps(first, taskId)).toMatchObject([
      { name: 'dispatched', done: true },
      { name: 'upstream', done: true },
    ]);
    first.child.kill('SIGKILL');
    await first.exited;
    const second = await gateway(upstream.url);
    const done = await settled(second, taskId, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expectExact(done.result, MOVED('carol', 700));
    const calls = upstreamCalls(at, 'transfer');
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      taskId: expect.any(String),
      meta: { 'dev.durable-mcp/idempotencyKey': `durable-mcp:${taskId}` },
    });
  });

  it('cancels the upstream task when the gateway task is cancelled', async () => {
    const upstream = await httpUpstream();
    const gw = await gateway(upstream.url);
    const created = await callTool(gw, 'alice', 'transfer', { to: 'dan', cents: 1, ms: 60_000 });
    const taskId = created.taskId as string;
    await following(gw, taskId, /^step \d of 60$/);
    const upstreamTaskId = upstreamCalls(at, 'transfer')[0]?.taskId;
    await gatewayClient(gw, 'alice').request('tasks/cancel', { taskId });
    await settled(gw, taskId, ['cancelled']);
    // The upstream's task ended cancelled: its work saw the status and stopped.
    await waitUntil(async () => cancelled().length === 1, 'the upstream task cancelled', 10_000);
    expect(cancelled()[0]).toMatchObject({ taskId: upstreamTaskId });
  });

  it('cancels the upstream task from a gateway restarted after a SIGKILL, on the recorded session', async () => {
    const upstream = await httpUpstream();
    const first = await gateway(upstream.url);
    const created = await callTool(first, 'alice', 'transfer', { to: 'gus', cents: 2, ms: 60_000 });
    const taskId = created.taskId as string;
    await following(first, taskId, /^step \d of 60$/);
    first.child.kill('SIGKILL');
    await first.exited;
    const second = await gateway(upstream.url);
    // The new gateway follows: the upstream's status moves on under it.
    const stepNow = async () => {
      const task = (await gatewayClient(second, 'alice').request('tasks/get', { taskId })).result as Json;
      return Number(/^step (\d+) of 60$/.exec(String(task.statusMessage))?.[1] ?? 0);
    };
    const before = await stepNow();
    await waitUntil(async () => (await stepNow()) >= before + 2, 'the restarted gateway following');
    await gatewayClient(second, 'alice').request('tasks/cancel', { taskId });
    await settled(second, taskId, ['cancelled']);
    await waitUntil(async () => cancelled().length === 1, 'the upstream task cancelled', 10_000);
    expect(cancelled()[0]).toMatchObject({ taskId: upstreamCalls(at, 'transfer')[0]?.taskId });
  });

  it('calls a tool without task support within its request, as before', async () => {
    const upstream = await httpUpstream();
    const gw = await gateway(upstream.url);
    const created = await callTool(gw, 'alice', 'plain_sum', { a: 2, b: 3 });
    const done = await settled(gw, created.taskId as string, ['completed']);
    expect(done.result).toMatchObject({ content: [{ type: 'text', text: '5' }] });
    expect(upstreamCalls(at, 'plain_sum')).toMatchObject([{ taskId: null }]);
  });
});

describe('durable-mcp gateway in front of an SDK v1 server with tasks, over stdio', () => {
  const stdio = `stdio:node ${UPSTREAM}`;

  it('follows the upstream task to its end; a failed one with a tool error gives that result', async () => {
    const gw = await gateway(stdio);
    const created = await callTool(gw, 'alice', 'transfer', { to: 'erin', cents: 5, ms: 1_500 });
    const done = await settled(gw, created.taskId as string, ['completed', 'failed']);
    expectExact(done.result, MOVED('erin', 5));
    expect(upstreamCalls(at, 'transfer')).toMatchObject([{ taskId: expect.any(String) }]);
    const refused = await callTool(gw, 'alice', 'refuse', { why: 'no', ms: 0 });
    const ended = await settled(gw, refused.taskId as string, ['completed', 'failed']);
    expect(ended.result).toMatchObject({ content: [{ type: 'text', text: 'refused: no' }], isError: true });
  });

  it('ends the call "outcome unknown", naming the upstream task, after a SIGKILL of the gateway (the task died with its child)', async () => {
    const first = await gateway(stdio);
    const created = await callTool(first, 'alice', 'transfer', { to: 'fay', cents: 3, ms: 4_000 });
    const taskId = created.taskId as string;
    await following(first, taskId, /^step \d of 4$/);
    first.child.kill('SIGKILL');
    await first.exited;
    const second = await gateway(stdio);
    const failed = await settled(second, taskId, ['completed', 'failed']);
    const upstreamTaskId = upstreamCalls(at, 'transfer')[0]?.taskId;
    expect(failed.error).toMatchObject({
      code: -32603,
      data: { outcome: 'unknown', tool: 'transfer', upstreamTaskId },
    });
    expect(upstreamCalls(at, 'transfer')).toHaveLength(1);
  });
});
