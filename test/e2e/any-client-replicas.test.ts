// Clients without the tasks extension, served by two `durable-mcp serve` replicas on one PostgreSQL schema: replica
// A serves requests only (--concurrency 0), replica B runs the tasks. A call to A waits for a task B runs, woken
// across processes by the change feed (LISTEN/NOTIFY); a task handed back by A is followed and answered through the
// facade tools on either replica, and an extension-aware client sees the same task.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient, type McpHttpClient } from '../../src/advanced.js';
import type { JsonObject } from '../../src/wire/jsonrpc.js';
import { startServe, type ServeProcess } from '../support/cli.js';
import { TEST_POSTGRES_URL, withPostgres } from '../support/postgres.js';

const SCHEMA = `dmcp_any_client_${randomBytes(5).toString('hex')}`;
const TOOLS = fileURLToPath(new URL('../fixtures/tools/any-client-tools.mjs', import.meta.url));
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const BACKGROUND = 'dev.durable-mcp/backgroundTask';

await withPostgres('the any-client replica tests', defineSuites);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const textOf = (result: JsonObject): string =>
  (result.content as JsonObject[])
    .filter((b) => b.type === 'text')
    .map((b) => String(b.text))
    .join('\n');

const structured = (result: JsonObject): JsonObject => result.structuredContent as JsonObject;

/** A task snapshot without `_meta` and `resultType`, for comparing what two replicas report. */
const strip = (t: JsonObject): JsonObject => {
  const { _meta: _m, resultType: _r, ...rest } = t;
  return rest;
};

interface Replica {
  proc: ServeProcess;
  pid: string;
  /** A client that declares no extension. */
  plain: McpHttpClient;
  /** A client that declares the tasks extension. */
  tasks: McpHttpClient;
}

/** A tools/call (or facade call) bounded by `timeoutMs`, with the time it took. */
async function callTool(
  client: McpHttpClient,
  name: string,
  args: JsonObject,
  timeoutMs: number,
): Promise<{ result: JsonObject; ms: number }> {
  const t0 = Date.now();
  const reply = await client.request(
    'tools/call',
    { name, arguments: args },
    { signal: AbortSignal.timeout(timeoutMs) },
  );
  return { result: reply.result, ms: Date.now() - t0 };
}

const rpc = async (client: McpHttpClient, method: string, params: JsonObject): Promise<JsonObject> =>
  (await client.request(method, params, { signal: AbortSignal.timeout(5_000) })).result;

function defineSuites(): void {
  const admin = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max: 1 });

  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(SCHEMA)} CASCADE`);
    await admin.end();
  });

  async function startReplica(concurrency: number, budgetMs: number): Promise<Replica> {
    const proc = await startServe(
      [
        '--port',
        '0',
        '--store',
        TEST_POSTGRES_URL,
        '--pg-schema',
        SCHEMA,
        '--concurrency',
        String(concurrency),
        '--fallback-budget-ms',
        String(budgetMs),
        '--no-audit',
        '--no-metrics',
        '--tasks-get-rate',
        '0',
        '--max-active-tasks',
        '0',
        '--tools',
        TOOLS,
      ],
      15_000,
    );
    return {
      proc,
      pid: String(proc.child.pid),
      plain: createHttpClient({ url: proc.url, capabilities: {} }),
      tasks: createHttpClient({ url: proc.url, capabilities: TASKS }),
    };
  }

  /** SIGTERM, then SIGKILL if the process is still there after 2 s. */
  async function stop(replica: Replica | undefined): Promise<void> {
    if (replica === undefined) return;
    const { child, exited } = replica.proc;
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const done = await Promise.race([exited.then(() => true), sleep(2_000).then(() => false)]);
    if (!done) {
      child.kill('SIGKILL');
      await exited;
    }
  }

  /** Replica A serves requests only, replica B runs tasks; both wait `budgetMs` for calls without the extension. */
  function usePair(budgetMs: number): { a: () => Replica; b: () => Replica } {
    let a: Replica | undefined;
    let b: Replica | undefined;
    beforeAll(async () => {
      [a, b] = await Promise.all([startReplica(0, budgetMs), startReplica(2, budgetMs)]);
    });
    afterAll(async () => {
      await Promise.all([stop(a), stop(b)]);
    });
    return { a: () => a as Replica, b: () => b as Replica };
  }

  describe('replicas with a 5 s budget', () => {
    const { a, b } = usePair(5_000);

    it('a fast call to A (which runs no tasks) answers the ordinary result, woken by B finishing it', async () => {
      const times: number[] = [];
      for (let i = 0; i < 3; i++) {
        const { result, ms } = await callTool(a().plain, 'nap', { ms: 50 }, 8_000);
        times.push(ms);
        expect(result.resultType).toBe('complete');
        expect(result.isError).toBeUndefined();
        // B ran it: A has no worker.
        expect(textOf(result)).toBe(`slept 50 ms in ${b().pid}`);
        expect(result.structuredContent).toBeUndefined();
        expect((result._meta as JsonObject | undefined)?.[BACKGROUND]).toBeUndefined();
      }
      console.log(`any-client replicas: fast calls through A took ${times.join(', ')} ms (budget 5000)`);
      // Far below the budget: the wait ended on B's completion, not when the budget ran out.
      for (const ms of times) expect(ms).toBeLessThan(4_000);
      // Later calls, with A's LISTEN connection open: prompt (generous bound; they typically take under 100 ms).
      for (const ms of times.slice(1)) expect(ms).toBeLessThan(1_500);
    });

    it('the input tool called on A hands back input_required; task_respond on B completes it', async () => {
      const handed = await callTool(a().plain, 'confirm', {}, 8_000);
      expect(handed.result.resultType).toBe('complete');
      expect(handed.result.isError).toBeUndefined();
      const back = structured(handed.result);
      const taskId = String(back.taskId);
      expect(back.status).toBe('input_required');
      expect(typeof back.instructions).toBe('string');
      expect(textOf(handed.result)).toContain(taskId);
      expect(Object.keys(back.inputRequests as JsonObject)).toEqual(['go_ahead']);
      expect((back.inputRequests as Record<string, JsonObject>).go_ahead?.method).toBe('elicitation/create');
      expect((handed.result._meta as JsonObject)[BACKGROUND]).toEqual({ taskId, status: 'input_required' });
      // The question ends the wait at once (B asked it; A heard of it through the change feed).
      expect(handed.ms).toBeLessThan(4_000);
      const next = back.next as { tool: string; arguments: JsonObject };
      expect(next.tool).toBe('task_respond');
      const shape = (next.arguments.inputResponses as Record<string, JsonObject>).go_ahead;
      expect(shape?.action).toHaveProperty('placeholder');

      // Sent as they are on the other replica, the suggested arguments answer nothing; the user's answer does.
      const verbatim = await callTool(b().plain, next.tool, next.arguments, 8_000);
      expect(verbatim.result.isError).toBe(true);
      expect(textOf(verbatim.result)).toContain('Ask the user');
      const answers = { go_ahead: { action: 'accept', content: { ok: true } } };
      const answered = await callTool(b().plain, next.tool, { taskId, inputResponses: answers }, 8_000);
      expect(answered.result.isError).toBeUndefined();
      const done = structured(answered.result);
      expect(done.taskId).toBe(taskId);
      expect(done.status).toBe('completed');
      expect(done.next).toBeUndefined();
      const text = `answered accept true in ${b().pid}`;
      expect(textOf(answered.result)).toContain(text);
      expect((done.result as { content: JsonObject[] }).content).toEqual([{ type: 'text', text }]);
      expect(answered.ms).toBeLessThan(4_000);

      // An extension-aware client sees the same task, on either replica.
      const [onA, onB] = await Promise.all([
        rpc(a().tasks, 'tasks/get', { taskId }),
        rpc(b().tasks, 'tasks/get', { taskId }),
      ]);
      expect(onA.status).toBe('completed');
      expect((onA.result as { content: JsonObject[] }).content).toEqual([{ type: 'text', text }]);
      expect(strip(onA)).toEqual(strip(onB));
      console.log(
        `any-client replicas: input hand-back from A in ${handed.ms} ms, task_respond on B in ${answered.ms} ms`,
      );
    });
  });

  describe('replicas with a 300 ms budget', () => {
    const { a, b } = usePair(300);

    it('a slow call to A hands back; task_status on B, then on A, follows it to completion', async () => {
      const t0 = Date.now();
      const handed = await callTool(a().plain, 'nap', { ms: 3_000 }, 5_000);
      expect(handed.result.resultType).toBe('complete');
      expect(handed.result.isError).toBeUndefined();
      const back = structured(handed.result);
      const taskId = String(back.taskId);
      expect(back.status).toBe('working');
      expect(back.next).toEqual({ tool: 'task_status', arguments: { taskId } });
      expect(textOf(handed.result)).toMatch(/did not finish within/);
      expect((handed.result._meta as JsonObject)[BACKGROUND]).toEqual({ taskId, status: 'working' });
      // It waited the budget, then handed back well before the task could end.
      expect(handed.ms).toBeGreaterThanOrEqual(250);
      expect(handed.ms).toBeLessThan(2_000);

      // On B (which runs it): still working, after a wait of the budget.
      const next = back.next as { tool: string; arguments: JsonObject };
      const onB = await callTool(b().plain, next.tool, next.arguments, 5_000);
      expect(onB.result.isError).toBeUndefined();
      expect(structured(onB.result).status).toBe('working');
      expect(structured(onB.result).next).toEqual(next);
      expect(onB.ms).toBeGreaterThanOrEqual(250);

      // Then on A until it ends; each working answer names the same next call.
      const times: number[] = [];
      let last: JsonObject | undefined;
      const end = Date.now() + 10_000;
      while (Date.now() < end) {
        const { result, ms } = await callTool(a().plain, next.tool, next.arguments, 5_000);
        times.push(ms);
        expect(result.isError).toBeUndefined();
        const s = structured(result);
        expect(s.taskId).toBe(taskId);
        if (s.status !== 'working') {
          last = result;
          break;
        }
        expect(s.next).toEqual(next);
      }
      const tDone = Date.now() - t0;
      console.log(
        `any-client replicas: hand-back after ${handed.ms} ms, task_status on B ${onB.ms} ms, ` +
          `on A ${times.join(', ')} ms; completion seen ${tDone} ms after the call (task sleeps 3000 ms)`,
      );
      expect(last, `task ${taskId} did not end within 10 s`).toBeDefined();
      const done = structured(last as JsonObject);
      expect(done.status).toBe('completed');
      const text = `slept 3000 ms in ${b().pid}`;
      expect((done.result as { content: JsonObject[] }).content).toEqual([{ type: 'text', text }]);
      expect(textOf(last as JsonObject)).toContain(text);
      // Every working answer waited about the budget; the run of status calls ended soon after the task did.
      for (const ms of times.slice(0, -1)) expect(ms).toBeGreaterThanOrEqual(250);
      expect(tDone).toBeLessThan(3_000 + 2_000);

      // An extension-aware client sees the same task with tasks/get on B (and on A).
      const got = await rpc(b().tasks, 'tasks/get', { taskId });
      expect(got.resultType).toBe('complete');
      expect(got.taskId).toBe(taskId);
      expect(got.status).toBe('completed');
      // The stored result also carries what the server adds to every answer (resultType, _meta).
      expect((got.result as JsonObject).content).toEqual([{ type: 'text', text }]);
      expect(strip(await rpc(a().tasks, 'tasks/get', { taskId }))).toEqual(strip(got));
    });
  });
}
