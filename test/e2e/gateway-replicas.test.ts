// Two `durable-mcp gateway` replicas on one PostgreSQL schema, each with its own SDK v1 upstream process over stdio:
// the replica running a call is SIGKILLed mid-call, and the other takes the task over once its lease ends. An
// idempotent tool is sent again and completes with the upstream's exact result; any other ends "outcome unknown"
// without being sent twice. Input an upstream asks for reaches it from either replica: an SDK v1 one over Streamable
// HTTP waiting on its session, and a 2026-07-28 one asked again by any replica.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../support/admin-api.js';
import { createHttpClient } from '../../src/advanced.js';
import { TOKENS } from '../support/admin-api.js';
import { startListening, startServe, type ServeProcess } from '../support/cli.js';
import {
  askingClient,
  callTool,
  gatewayDir,
  settled,
  startGateway,
  SUM,
  UPSTREAM,
  upstreamCalls,
  upstreamEnv,
  type GatewayDir,
} from '../support/gateway.js';
import { dropSchema, TEST_POSTGRES_URL, withPostgres } from '../support/postgres.js';

const SCHEMA = `dmcp_gateway_${randomBytes(5).toString('hex')}`;
const MODERN_TOOLS = fileURLToPath(new URL('../fixtures/gateway/upstream-modern.mjs', import.meta.url));
/** A caller that declares the tasks extension and can answer elicitation. */
const ASKING = { extensions: { 'io.modelcontextprotocol/tasks': {} }, elicitation: {} };
const STORE = ['--store', TEST_POSTGRES_URL, '--pg-schema', SCHEMA, '--pg-pool-size', '3'];

await withPostgres('the gateway on PostgreSQL replicas', () => {
  let at: GatewayDir;
  const procs: ServeProcess[] = [];

  beforeEach(() => {
    at = gatewayDir(mkdtempSync(join(tmpdir(), 'durable-mcp-gateway-pg-')));
  });
  afterEach(async () => {
    for (const p of procs.splice(0)) {
      p.child.kill('SIGKILL');
      await p.exited;
    }
    rmSync(at.dir, { recursive: true, force: true });
  });
  afterAll(() => dropSchema(SCHEMA));

  /**
   * Replica A runs the call (B, with no worker, only answers requests); A is SIGKILLed once the upstream has the call,
   * and replica C, started then, takes the task over once A's lease has ended. The client follows through B.
   */
  async function killedMidCall(tool: string, args: Record<string, unknown>) {
    const a = await startGateway(at, procs, { extra: STORE });
    const b = await startGateway(at, procs, { extra: [...STORE, '--concurrency', '0'] });
    const created = await callTool(a, 'alice', tool, args);
    await waitUntil(async () => upstreamCalls(at, tool).length === 1, 'the call upstream');
    a.child.kill('SIGKILL');
    await a.exited;
    const c = await startGateway(at, procs, { extra: STORE });
    return { b, c, taskId: created.taskId as string };
  }

  describe('a gateway replica SIGKILLed mid-call', () => {
    it('sends an idempotent call again from another replica: the upstream counts 2, the client one result', async () => {
      const { b, taskId } = await killedMidCall('slow_sum', { a: 2, b: 3, ms: 1_500 });
      const done = await settled(b, taskId, ['completed']);
      expect(done.result).toMatchObject(SUM);
      expect(upstreamCalls(at, 'slow_sum')).toHaveLength(2);
    });

    it('ends a non-idempotent call "outcome unknown" on another replica, sent once', async () => {
      const { b, taskId } = await killedMidCall('send_payment', { to: 'erin', cents: 9, ms: 1_500 });
      const failed = await settled(b, taskId, ['failed']);
      expect(failed.error).toMatchObject({
        code: -32603,
        data: { outcome: 'unknown', tool: 'send_payment' },
      });
      await new Promise((resolve) => setTimeout(resolve, 1_800));
      expect(upstreamCalls(at, 'send_payment')).toHaveLength(1);
    });
  });

  describe('input the upstream asks for', () => {
    it('from an SDK v1 upstream over Streamable HTTP, waiting on its session: the answer sent to the other replica reaches the replica running the call, which completes it', async () => {
      const upstream = await startListening([UPSTREAM, '--http', '0'], { env: upstreamEnv(at) });
      procs.push(upstream);
      // A runs the call and holds its session to the upstream; B, with no worker, only answers requests.
      const a = await startGateway(at, procs, { upstream: upstream.url, extra: STORE });
      const b = await startGateway(at, procs, {
        upstream: upstream.url,
        extra: [...STORE, '--concurrency', '0'],
      });
      const { result: created } = await askingClient(a, 'alice').request('tools/call', {
        name: 'ask',
        arguments: { question: 'Ship it?' },
      });
      const taskId = created.taskId as string;
      const waiting = await settled(b, taskId, ['input_required']);
      expect(waiting.inputRequests).toMatchObject({
        elicitation: { method: 'elicitation/create', params: { message: 'Ship it?' } },
      });
      await askingClient(b, 'alice').request('tasks/update', {
        taskId,
        inputResponses: { elicitation: { action: 'accept', content: { ok: true } } },
      });
      const done = await settled(b, taskId, ['completed', 'failed']);
      expect(done.result).toMatchObject({
        content: [{ type: 'text', text: 'Ship it?: accept {"ok":true}' }],
      });
      expect(upstreamCalls(at, 'ask')).toHaveLength(1);
    });

    it("becomes the gateway task's input; the answer, sent to another replica after the first is SIGKILLed, completes the call", async () => {
      // A 2026-07-28 upstream (durable-mcp serve) whose tool asks for a confirmation inside its task.
      const upstream = await startServe(
        [
          '--tools',
          MODERN_TOOLS,
          '--store',
          join(at.dir, 'upstream.db'),
          '--port',
          '0',
          '--tasks-get-rate',
          '0',
        ],
        20_000,
        { UPSTREAM_CALLS: at.calls },
      );
      procs.push(upstream);
      const a = await startGateway(at, procs, { upstream: upstream.url, extra: STORE });
      const b = await startGateway(at, procs, { upstream: upstream.url, extra: STORE });
      const asking = (proc: ServeProcess) =>
        createHttpClient({ url: proc.url, token: TOKENS.alice, capabilities: ASKING });
      const { result: created } = await asking(a).request('tools/call', {
        name: 'approve',
        arguments: { what: 'the release' },
      });
      const taskId = created.taskId as string;
      const waiting = await settled(b, taskId, ['input_required']);
      expect(Object.keys(waiting.inputRequests as Record<string, unknown>)).toEqual(['confirm']);
      a.child.kill('SIGKILL');
      await a.exited;
      await asking(b).request('tasks/update', {
        taskId,
        inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
      });
      const done = await settled(b, taskId, ['completed', 'failed']);
      expect(done.result).toMatchObject({ content: [{ type: 'text', text: 'the release: accept true' }] });
      expect(upstreamCalls(at, 'approve')).toHaveLength(1);
    });
  });
});
