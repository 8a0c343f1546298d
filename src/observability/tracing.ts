// Optional OpenTelemetry tracing: spans for requests, task runs, step attempts and waits, one trace from a tools/call
// to the last step of its task on whichever process runs it. No-op unless an OpenTelemetry SDK is registered.
import {
  context,
  createTraceState,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';
import type { RunInfo, StepInfo, TaskObserver, WaitInfo } from '../tasks/observer.js';
import { toTraceContext, traceContextOfMeta, type TraceContext } from '../tasks/trace-context.js';

const TRACER = 'durable-mcp';
const tracer = () => trace.getTracer(TRACER);

/** A context whose span is the remote one a kept (or received) trace context names. */
export function contextOfTrace(kept: TraceContext): Context {
  const [, traceId = '', spanId = '', flags = '00'] = kept.traceParent.split('-');
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16),
    isRemote: true,
    ...(kept.traceState === undefined ? {} : { traceState: createTraceState(kept.traceState) }),
  });
}

/**
 * The trace context of the active span, when one is recording: what a task created within the request keeps
 * (TasksExtensionOptions.traceContext), so that its runs are children of the request's span.
 */
export function activeTraceContext(): TraceContext | undefined {
  const span = trace.getActiveSpan();
  if (span === undefined || !span.isRecording()) return undefined;
  const { traceId, spanId, traceFlags, traceState } = span.spanContext();
  const flags = (traceFlags & 0xff).toString(16).padStart(2, '0');
  return toTraceContext(`00-${traceId}-${spanId}-${flags}`, traceState?.serialize());
}

/**
 * Wraps one dispatched request in a span named after its JSON-RPC method: a child of the caller's W3C `traceparent`
 * in `params._meta` when it sent a valid one (an invalid one is ignored), else of the active context.
 */
export async function traced<T extends { ok: boolean }>(
  method: string,
  run: () => Promise<T>,
  meta?: unknown,
): Promise<T> {
  const caller = traceContextOfMeta(meta);
  return tracer().startActiveSpan(
    `mcp ${method}`,
    { kind: SpanKind.SERVER, attributes: { 'rpc.system': 'jsonrpc', 'rpc.method': method } },
    caller === undefined ? context.active() : contextOfTrace(caller),
    async (span) => {
      try {
        const outcome = await run();
        if (!outcome.ok) span.setStatus({ code: SpanStatusCode.ERROR });
        return outcome;
      } finally {
        span.end();
      }
    },
  );
}

/** A run's span, and the context its step and wait spans are children in (none: the run is not recorded). */
interface RunSpan {
  span: Span;
  children: Context | undefined;
}

/** The name of the error a step threw, for `error.type`. */
const errorType = (err: unknown): string =>
  err instanceof Error ? err.name : err === undefined ? 'unknown' : typeof err;

/**
 * A span per task run, from claim to the run's ending write, as a child of the trace the task keeps (NewTask.trace),
 * whichever process claims it; within it a span per step attempt and per wait. A run that is not recorded (no SDK,
 * or sampled out) gets no child spans: nothing is made for its steps.
 */
export function createTracingObserver(): TaskObserver {
  const runs = new Map<string, RunSpan>();
  const open = new WeakMap<StepInfo | WaitInfo, Span>();
  const child = (run: RunInfo, name: string, attributes: () => Attributes): Span | undefined => {
    const parent = runs.get(run.id)?.children;
    return parent === undefined ? undefined : tracer().startSpan(name, { attributes: attributes() }, parent);
  };
  return {
    runStarted(run) {
      const parent = run.trace === undefined ? context.active() : contextOfTrace(run.trace);
      const span = tracer().startSpan(
        'mcp task run',
        { attributes: { 'mcp.task.id': run.id, 'mcp.tool': run.tool, 'mcp.task.taken_over': run.takenOver } },
        parent,
      );
      runs.set(run.id, { span, children: span.isRecording() ? trace.setSpan(parent, span) : undefined });
    },
    runFinished(run, outcome, _ms, written) {
      const span = runs.get(run.id)?.span;
      runs.delete(run.id);
      span?.setAttributes({ 'mcp.task.outcome': outcome, 'mcp.task.written': written });
      if (outcome === 'failed') span?.setStatus({ code: SpanStatusCode.ERROR });
      span?.end();
    },
    stepStarted(run, step) {
      const span = child(run, 'mcp task step', () => ({
        'mcp.step.name': step.name,
        'mcp.step.attempt': step.attempt,
      }));
      if (span !== undefined) open.set(step, span);
    },
    stepEnded(_run, step, outcome, err) {
      const span = open.get(step);
      if (span === undefined) return;
      open.delete(step);
      span.setAttribute('mcp.step.outcome', outcome);
      if (outcome === 'failed' || outcome === 'retrying') {
        span.setAttribute('error.type', errorType(err));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    },
    waitStarted(run, wait) {
      const span = child(run, 'mcp task wait', () => ({
        'mcp.wait.kind': wait.kind,
        ...(wait.name === undefined ? {} : { 'mcp.wait.name': wait.name }),
        ...(wait.until === undefined ? {} : { 'mcp.wait.until': new Date(wait.until).toISOString() }),
      }));
      if (span !== undefined) open.set(wait, span);
    },
    waitEnded(_run, wait, outcome) {
      const span = open.get(wait);
      if (span === undefined) return;
      open.delete(wait);
      span.setAttribute('mcp.wait.outcome', outcome);
      span.end();
    },
  };
}
