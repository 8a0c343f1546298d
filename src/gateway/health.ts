// The upstream's health as operators see it on the console: whether it answers (and since when), the calls this
// process sent it, how many failed and their mean duration. Fed by the same reports as the metrics (UpstreamObserver).
import type { AdminHealthComponent } from '../tasks/admin.js';
import type { UpstreamCallOutcome, UpstreamObserver } from './upstream.js';

export interface UpstreamHealth {
  /** Give it the upstream's reports (beside the metrics'). */
  readonly observer: UpstreamObserver;
  /** The upstream as a health component. */
  component(): AdminHealthComponent;
}

/** Outcomes that count as errors: the upstream refused the call, or did not answer it, or it was not sent. */
const ERRORS: ReadonlySet<UpstreamCallOutcome> = new Set(['refused', 'lost', 'not_sent']);

/**
 * `name`: the upstream as operators know it (describeTarget: its URL without credentials, or its command); `label`:
 * its `upstream` label in the metrics (upstreamLabel). `now`: the clock (ms).
 */
export function createUpstreamHealth(
  name: string,
  label: string,
  now: () => number = Date.now,
): UpstreamHealth {
  let up: boolean | undefined;
  let since: number | undefined;
  let calls = 0;
  let errors = 0;
  let totalMs = 0;
  const series = (metric: string) => `durable_mcp_${metric}{upstream=${JSON.stringify(label)}}`;
  return {
    observer: {
      call(outcome, durationMs) {
        calls++;
        totalMs += durationMs;
        if (ERRORS.has(outcome)) errors++;
      },
      answering(answers) {
        if (answers === up) return;
        up = answers;
        since = now();
      },
    },
    component: () => ({
      kind: 'upstream',
      name,
      status: up === undefined ? 'unknown' : up ? 'up' : 'down',
      since,
      calls,
      errors,
      meanMs: calls === 0 ? undefined : Math.round(totalMs / calls),
      metrics: [
        series('upstream_up'),
        series('upstream_calls_total'),
        series('upstream_call_duration_seconds'),
      ],
    }),
  };
}
