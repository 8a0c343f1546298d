// Optional OpenTelemetry tracing: spans for requests and task runs. No-op unless an OpenTelemetry SDK is registered.
import { SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { TaskObserver } from '../tasks/observer.js';

const tracer = () => trace.getTracer('durable-mcp');

/** Wraps one dispatched request in a span named after its JSON-RPC method. */
export async function traced<T extends { ok: boolean }>(method: string, run: () => Promise<T>): Promise<T> {
  return tracer().startActiveSpan(
    `mcp ${method}`,
    { attributes: { 'rpc.system': 'jsonrpc', 'rpc.method': method } },
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

/** A span per task run, from claim to the run's ending write. */
export function createTracingObserver(): TaskObserver {
  const spans = new Map<string, Span>();
  return {
    runStarted(run) {
      spans.set(
        run.id,
        tracer().startSpan('mcp task run', {
          attributes: { 'mcp.task.id': run.id, 'mcp.tool': run.tool, 'mcp.task.taken_over': run.takenOver },
        }),
      );
    },
    runFinished(run, outcome, _ms, written) {
      const span = spans.get(run.id);
      spans.delete(run.id);
      span?.setAttributes({ 'mcp.task.outcome': outcome, 'mcp.task.written': written });
      if (outcome === 'failed') span?.setStatus({ code: SpanStatusCode.ERROR });
      span?.end();
    },
  };
}
