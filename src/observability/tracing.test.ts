// Tracing through the OpenTelemetry API, recorded in memory: the request span under the caller's traceparent, the
// trace a task keeps, run spans under it, and step and wait spans under their run.
import { SpanStatusCode } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { clockWithNow } from '../tasks/clock.js';
import type { TaskRunner } from '../tasks/execution.js';
import { startRun } from '../worker/run-task.js';
import {
  installDroppingTracer,
  installRecordingTracer,
  type RecordingTracing,
} from '../../test/support/recording-tracer.js';
import {
  advance,
  LEASE,
  newTask,
  now,
  openStore,
  track,
  useWorkerHarness,
} from '../../test/support/worker-harness.js';
import { activeTraceContext, createTracingObserver, traced } from './tracing.js';

useWorkerHarness();

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TRACE_PARENT = `00-${TRACE_ID}-${CALLER_SPAN}-01`;

let tracing: RecordingTracing | undefined;
afterEach(() => {
  tracing?.uninstall();
  tracing = undefined;
});

const ok = async () => ({ ok: true });

describe('the request span', () => {
  it("is a child of the caller's _meta traceparent, whose tracestate it carries on to the task", async () => {
    tracing = installRecordingTracer();
    const kept = await traced('tools/call', async () => ({ ok: true, kept: activeTraceContext() }), {
      traceparent: TRACE_PARENT,
      tracestate: 'congo=t61rcWkgMzE',
    });
    const [span] = tracing.named('mcp tools/call');
    expect(span).toMatchObject({
      traceId: TRACE_ID,
      parent: { spanId: CALLER_SPAN, isRemote: true },
      ended: true,
    });
    // What a task created within the request keeps: the request span itself.
    expect(kept.kept).toEqual({
      traceParent: `00-${TRACE_ID}-${span?.spanId}-01`,
      traceState: 'congo=t61rcWkgMzE',
    });
  });

  it.each([
    ['version ff', `ff-${TRACE_ID}-${CALLER_SPAN}-01`],
    ['a zero trace id', `00-${'0'.repeat(32)}-${CALLER_SPAN}-01`],
    ['a zero parent id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
    ['upper case', `00-${TRACE_ID.toUpperCase()}-${CALLER_SPAN}-01`],
    ['a trailing field', `${TRACE_PARENT}-00`],
    ['a number', 42],
  ])('ignores a traceparent with %s: a new trace, no error', async (_why, traceparent) => {
    tracing = installRecordingTracer();
    await expect(traced('tools/call', ok, { traceparent })).resolves.toEqual({ ok: true });
    const [span] = tracing.named('mcp tools/call');
    expect(span?.parent).toBeUndefined();
    expect(span?.traceId).not.toBe(TRACE_ID);
  });

  it('marks a failed dispatch with an error status', async () => {
    tracing = installRecordingTracer();
    await traced('tools/call', async () => ({ ok: false }), undefined);
    expect(tracing.named('mcp tools/call')[0]?.status.code).toBe(SpanStatusCode.ERROR);
  });
});

describe('the spans of a run', () => {
  const trace = { traceParent: TRACE_PARENT };

  async function claimTraced(store: ReturnType<typeof openStore>) {
    await store.create(newTask({ tool: 'fetch_page', trace }));
    const claimed = await store.claim('w1', LEASE, now());
    if (claimed === undefined) throw new Error('nothing to claim');
    return claimed;
  }

  const runner: TaskRunner = async (_task, exec) => {
    await exec.step('fetch', () => 1);
    await exec.step(
      'flaky',
      () => {
        throw new TypeError('boom');
      },
      { retry: { maxAttempts: 2, initialDelayMs: 1_000, jitter: 0 } },
    );
    await exec.sleepUntil('pause', now() + 5_000);
    return { kind: 'completed', result: {} };
  };

  it('are children of the trace the task keeps: the run, its step attempts and the wait it ends with', async () => {
    tracing = installRecordingTracer();
    const store = openStore();
    const observer = createTracingObserver();
    const deps = { store, runner, leaseMs: 60_000, clock: clockWithNow(now), observer };
    await track(startRun(deps, await claimTraced(store))).done;
    advance(1_000);
    const again = await store.claim('w2', LEASE, now());
    if (again === undefined) throw new Error('nothing to claim');
    await track(startRun(deps, again)).done;

    const runs = tracing.named('mcp task run');
    expect(runs).toHaveLength(2);
    for (const run of runs) expect(run.parent).toMatchObject({ traceId: TRACE_ID, spanId: CALLER_SPAN });
    expect(tracing.spans.every((s) => s.traceId === TRACE_ID && s.ended)).toBe(true);
    const [first, second] = runs;
    const under = (run: typeof first) => tracing?.spans.filter((s) => s.parent?.spanId === run?.spanId);
    expect(under(first)?.map((s) => [s.name, s.attributes])).toEqual([
      ['mcp task step', { 'mcp.step.name': 'fetch', 'mcp.step.attempt': 1, 'mcp.step.outcome': 'completed' }],
      [
        'mcp task step',
        {
          'mcp.step.name': 'flaky',
          'mcp.step.attempt': 1,
          'mcp.step.outcome': 'retrying',
          'error.type': 'TypeError',
        },
      ],
      [
        'mcp task wait',
        {
          'mcp.wait.kind': 'retry',
          'mcp.wait.name': 'flaky',
          'mcp.wait.until': new Date(now()).toISOString(),
          'mcp.wait.outcome': 'parked',
        },
      ],
    ]);
    expect(under(first)?.[1]?.status.code).toBe(SpanStatusCode.ERROR);
    expect(under(first)?.[0]?.status.code).toBe(SpanStatusCode.UNSET);
    // The second run replays `fetch` (no span) and fails `flaky` for good.
    expect(under(second)?.map((s) => s.attributes['mcp.step.outcome'])).toEqual(['failed']);
    expect(second?.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('gives a sleep its wait span, and a run not recorded no child spans at all', async () => {
    const dropping = installDroppingTracer();
    try {
      const store = openStore();
      const sleeper: TaskRunner = async (_task, exec) => {
        await exec.step('one', () => 1);
        await exec.step('two', () => 2);
        await exec.sleepUntil('nap', now() + 1_000);
        return { kind: 'completed', result: {} };
      };
      const observer = createTracingObserver();
      const deps = { store, runner: sleeper, leaseMs: 60_000, clock: clockWithNow(now), observer };
      await track(startRun(deps, await claimTraced(store))).done;
      // The run span only: its steps and its wait start none.
      expect(dropping.started()).toBe(1);
    } finally {
      dropping.uninstall();
    }
    tracing = installRecordingTracer();
    const store = openStore();
    const sleeper: TaskRunner = async (_task, exec) => {
      await exec.sleepUntil('nap', now() + 1_000);
      return { kind: 'completed', result: {} };
    };
    const deps = {
      store,
      runner: sleeper,
      leaseMs: 60_000,
      clock: clockWithNow(now),
      observer: createTracingObserver(),
    };
    await track(startRun(deps, await claimTraced(store))).done;
    expect(tracing.named('mcp task wait').map((s) => s.attributes)).toEqual([
      {
        'mcp.wait.kind': 'sleep',
        'mcp.wait.name': 'nap',
        'mcp.wait.until': new Date(now() + 1_000).toISOString(),
        'mcp.wait.outcome': 'parked',
      },
    ]);
  });
});
