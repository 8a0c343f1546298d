// HTTP requests by method and code and their durations, tallied per response in plain numbers and folded into the
// prom-client counter and histogram when they are read (a /metrics scrape): what they show is what observing each
// response in them would show, without their label hashing on every request.
import { Counter, Histogram, type Registry } from 'prom-client';

/** Counts one HTTP response under its method label and status code, with its duration. */
export type HttpTally = (label: string, status: number, durationMs: number) => void;

const P = 'durable_mcp_';

/** Upper bounds (seconds) of the duration histogram's buckets. */
export const HTTP_DURATION_BUCKETS: readonly number[] = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5];

/** The durations of one method label since the process started (cumulative: the sum adds up as prom-client's). */
interface DurationTally {
  readonly labels: { method: string };
  /** Responses per bucket (not cumulative); over the last bound, only in `count`. */
  readonly buckets: number[];
  sum: number;
  count: number;
}

/** Responses of one (method, code) not yet added to the counter. */
interface CountTally {
  readonly labels: { method: string; code: string };
  pending: number;
}

/** What prom-client keeps per label set of a histogram, which the fold writes. */
interface HistogramEntry {
  labels: { method: string };
  bucketValues: Record<number, number>;
  sum: number;
  count: number;
}

/** The counter and histogram of HTTP responses in `registry`, and the tally that feeds them. */
export function createHttpMetrics(registry: Registry): HttpTally {
  // In the order first seen: the order prom-client would have created their series in.
  const counts: CountTally[] = [];
  const durations: DurationTally[] = [];
  const byLabel = new Map<string, { duration: DurationTally; byStatus: Map<number, CountTally> }>();
  new Counter({
    name: `${P}http_requests_total`,
    help: 'HTTP requests',
    labelNames: ['method', 'code'],
    registers: [registry],
    collect() {
      for (const tally of counts) {
        if (tally.pending === 0) continue;
        this.inc(tally.labels, tally.pending);
        tally.pending = 0;
      }
    },
  });
  new Histogram({
    name: `${P}http_request_duration_seconds`,
    help: 'HTTP request duration (time to the end of the response; long for subscriptions)',
    labelNames: ['method'],
    buckets: [...HTTP_DURATION_BUCKETS],
    registers: [registry],
    collect() {
      const entries: Record<string, HistogramEntry> = {};
      for (const { labels, buckets, sum, count } of durations) {
        const bucketValues: Record<number, number> = {};
        HTTP_DURATION_BUCKETS.forEach((bound, i) => (bucketValues[bound] = buckets[i] ?? 0));
        entries[labels.method] = { labels, bucketValues, sum, count };
      }
      (this as unknown as { hashMap: Record<string, HistogramEntry> }).hashMap = entries;
    },
  });
  return (label, status, durationMs) => {
    let tallies = byLabel.get(label);
    if (tallies === undefined) {
      const duration: DurationTally = {
        labels: { method: label },
        buckets: HTTP_DURATION_BUCKETS.map(() => 0),
        sum: 0,
        count: 0,
      };
      durations.push(duration);
      tallies = { duration, byStatus: new Map() };
      byLabel.set(label, tallies);
    }
    let count = tallies.byStatus.get(status);
    if (count === undefined) {
      count = { labels: { method: label, code: String(status) }, pending: 0 };
      counts.push(count);
      tallies.byStatus.set(status, count);
    }
    count.pending++;
    const seconds = durationMs / 1000;
    if (!Number.isFinite(seconds)) return;
    const duration = tallies.duration;
    duration.sum += seconds;
    duration.count++;
    const buckets = duration.buckets;
    for (let i = 0; i < HTTP_DURATION_BUCKETS.length; i++) {
      if (seconds <= (HTTP_DURATION_BUCKETS[i] as number)) {
        buckets[i] = (buckets[i] as number) + 1;
        return;
      }
    }
  };
}
