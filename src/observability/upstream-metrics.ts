// The gateway's upstream in Prometheus: calls by outcome, their durations, and whether it answers (its health:
// kept out of /readyz, since every replica would leave the balancer at once when the upstream goes down).
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** What the gateway's upstream connection reports (src/gateway/upstream.ts UpstreamObserver). */
export interface UpstreamRecorder {
  call(outcome: string, durationMs: number): void;
  answering(up: boolean): void;
}

const P = 'durable_mcp_';

/** Instruments on `registry` for the upstream labelled `upstream` (a host, or a stdio program's name). */
export function createUpstreamMetrics(registry: Registry, upstream: string): UpstreamRecorder {
  const calls = new Counter({
    name: `${P}upstream_calls_total`,
    help: 'Calls the gateway sent its upstream, by outcome (ok, tool_error, task, input_required, refused, lost, not_sent, cancelled)',
    labelNames: ['upstream', 'outcome'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: `${P}upstream_call_duration_seconds`,
    help: 'Duration of the calls the gateway sent its upstream, until their answer or failure',
    labelNames: ['upstream'],
    buckets: [0.005, 0.025, 0.1, 0.5, 1, 5, 30, 120, 600],
    registers: [registry],
  });
  const up = new Gauge({
    name: `${P}upstream_up`,
    help: '1 while the gateway upstream answers (its last request was answered), 0 once one could not reach it',
    labelNames: ['upstream'],
    registers: [registry],
  });
  up.set({ upstream }, 0);
  return {
    call(outcome, durationMs) {
      calls.inc({ upstream, outcome });
      duration.observe({ upstream }, durationMs / 1000);
    },
    answering(answers) {
      up.set({ upstream }, answers ? 1 : 0);
    },
  };
}
