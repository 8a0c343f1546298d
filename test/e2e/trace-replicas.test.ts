// One trace from a tools/call to the last step of its task across two replicas on one store (a shared SQLite file,
// a PostgreSQL schema): the caller's _meta traceparent is the parent of the request span, the task keeps that span's
// context, replica A's run stops midway (its worker stopped), and replica B's run resumes it in the same trace.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  createDurableMcp,
  createSqliteBackend,
  defineTool,
  textResult,
  type Backend,
} from '../../src/index.js';
import { createPostgresBackend } from '../../src/postgres.js';
import { envelope, mcpHeaders } from '../support/cli.js';
import { post } from '../support/http.js';
import { TEST_POSTGRES_URL, withPostgres } from '../support/postgres.js';
import { installRecordingTracer, type RecordingTracing } from '../support/recording-tracer.js';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-trace-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let tracing: RecordingTracing | undefined;
afterEach(() => {
  tracing?.uninstall();
  tracing = undefined;
});

/** The tool as a replica runs it: on replica A its second step never ends (until the worker stops it). */
function pipeline(replica: 'a' | 'b', reachedTwo: () => void) {
  return defineTool({
    name: 'pipeline',
    inputSchema: { type: 'object', properties: {} },
    task: { support: 'required' },
    handler: async (_args, ctx) => {
      await ctx.step('one', () => 1);
      await ctx.step('two', ({ signal }) => {
        reachedTwo();
        if (replica === 'b') return 2;
        return new Promise<number>((_resolve, reject) =>
          signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true }),
        );
      });
      await ctx.step('three', () => 3);
      return textResult('done');
    },
  });
}

function replica(backend: Backend, which: 'a' | 'b', reachedTwo: () => void) {
  return createDurableMcp({
    toolSets: [{ tools: [pipeline(which, reachedTwo)] }],
    backend,
    tracing: true,
    worker: { pollMs: 20, leaseMs: 2_000 },
  });
}

async function startTraced(
  url: string,
  traceparent: unknown = `00-${TRACE_ID}-${CALLER_SPAN}-01`,
): Promise<string> {
  const res = await post(
    url,
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'pipeline',
        arguments: {},
        _meta: {
          ...envelope(TASKS),
          traceparent,
          tracestate: 'vendor=x1',
        },
      },
    },
    mcpHeaders('tools/call', 'pipeline'),
  );
  const last = res.messages[res.messages.length - 1] as { result?: { taskId?: unknown } } | undefined;
  const taskId = last?.result?.taskId;
  if (typeof taskId !== 'string') throw new Error(`no task: HTTP ${res.status} ${res.text.slice(0, 300)}`);
  return taskId;
}

async function until(what: string, ready: () => Promise<boolean> | boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ready())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Replica A takes the call and stops midway; replica B, opened on the same store, resumes and ends the task. */
async function expectOneTrace(open: () => Promise<Backend> | Backend): Promise<void> {
  const recording = installRecordingTracer();
  tracing = recording;
  const backendA = await open();
  const backendB = await open();
  let reachedOnA = false;
  const a = replica(backendA, 'a', () => (reachedOnA = true));
  let b: ReturnType<typeof replica> | undefined;
  try {
    const onA = await a.listen({ port: 0 });
    const taskId = await startTraced(onA.url);
    await until('replica A runs step two', () => reachedOnA);
    // Replica A goes away mid-step: its run is stopped and the task handed back.
    await a.worker?.stop(0);
    b = replica(backendB, 'b', () => undefined);
    const store = backendB.tasks;
    await until(
      'replica B ends the task',
      async () => (await store.inspect?.(taskId, Date.now()))?.status === 'completed',
    );
    expect((await store.inspect?.(taskId, Date.now()))?.traceId).toBe(TRACE_ID);
    // The run's span ends once its worker has its ending back, which may be after another reader sees it.
    const ended = () =>
      recording.named('mcp task run').filter((s) => s.attributes['mcp.task.id'] === taskId && s.ended);
    await until("replica B's run span ends", () => ended().length === 2);

    const spans = tracing.spans;
    const [request] = tracing.named('mcp tools/call');
    expect(request?.parent).toMatchObject({ traceId: TRACE_ID, spanId: CALLER_SPAN });
    const runs = tracing.named('mcp task run').filter((s) => s.attributes['mcp.task.id'] === taskId);
    expect(runs.map((r) => r.attributes['mcp.task.outcome'])).toEqual(['released', 'completed']);
    // Both runs, one per replica, are children of the request span: the context the task kept.
    for (const run of runs) expect(run.parent?.spanId).toBe(request?.spanId);
    const stepsOf = (run: (typeof runs)[number] | undefined) =>
      spans
        .filter((s) => s.name === 'mcp task step' && s.parent?.spanId === run?.spanId)
        .map((s) => `${String(s.attributes['mcp.step.name'])} ${String(s.attributes['mcp.step.outcome'])}`);
    expect(stepsOf(runs[0])).toEqual(['one completed', 'two stopped']);
    // Replica B replays `one` (no span) and runs the rest.
    expect(stepsOf(runs[1])).toEqual(['two completed', 'three completed']);
    const ofTask = [
      request,
      ...runs,
      ...spans.filter((s) => runs.some((r) => s.parent?.spanId === r.spanId)),
    ];
    expect(ofTask.length).toBe(7);
    expect(ofTask.every((s) => s?.traceId === TRACE_ID && s.ended)).toBe(true);
  } finally {
    await a.close(0);
    await b?.close(0);
    await backendA.close();
    await backendB.close();
  }
}

describe('a trace context without tracing', () => {
  it("keeps the caller's valid traceparent with the task, and ignores an invalid one", async () => {
    const mcp = createDurableMcp({
      toolSets: [{ tools: [pipeline('b', () => undefined)] }],
      backend: createSqliteBackend({ path: join(dir, 'plain.db') }),
      worker: false,
    });
    try {
      const { url } = await mcp.listen({ port: 0 });
      const kept = await startTraced(url);
      const invalid = await startTraced(url, `00-${TRACE_ID}-${'0'.repeat(16)}-01`);
      const inspect = (id: string) => mcp.store.inspect?.(id, Date.now());
      expect((await inspect(kept))?.traceId).toBe(TRACE_ID);
      expect(await inspect(invalid)).toMatchObject({ status: 'working' });
      expect((await inspect(invalid))?.traceId).toBeUndefined();
    } finally {
      await mcp.close(0);
    }
  });
});

describe('a trace across replicas on one SQLite file', () => {
  it('spans the tools/call and every run and step of its task, on either replica', async () => {
    const path = join(dir, 'tasks.db');
    await expectOneTrace(() => createSqliteBackend({ path }));
  });
});

await withPostgres('a trace across PostgreSQL replicas', () => {
  describe('a trace across replicas on one PostgreSQL schema', () => {
    const schema = `trace_${process.pid}_${Date.now()}`;
    afterAll(async () => {
      const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
      await admin.end();
    });

    it('spans the tools/call and every run and step of its task, on either replica', async () => {
      await expectOneTrace(() => createPostgresBackend({ connectionString: TEST_POSTGRES_URL, schema }));
    });
  });
});
