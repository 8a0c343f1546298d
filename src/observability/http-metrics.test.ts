// The HTTP request metrics folded at scrape time read exactly as prom-client's own counter and histogram fed each
// response would: same series, order, bucket counts, sums and counts.
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createHttpMetrics, HTTP_DURATION_BUCKETS } from './http-metrics.js';

/** The same metrics observed per response, as prom-client does it. */
function reference() {
  const registry = new Registry();
  const count = new Counter({
    name: 'durable_mcp_http_requests_total',
    help: 'HTTP requests',
    labelNames: ['method', 'code'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'durable_mcp_http_request_duration_seconds',
    help: 'HTTP request duration (time to the end of the response; long for subscriptions)',
    labelNames: ['method'],
    buckets: [...HTTP_DURATION_BUCKETS],
    registers: [registry],
  });
  const tally = (label: string, status: number, ms: number): void => {
    count.labels(label, String(status)).inc();
    duration.labels(label).observe(ms / 1000);
  };
  return { registry, tally };
}

/** Responses spread over every bucket, the bounds themselves, past the last one, several methods and codes. */
function responses(n: number, seed: number): [string, number, number][] {
  const methods = ['tasks/get', 'tools/list', 'other', 'tools/call'];
  const codes = [200, 202, 400, 401, 500];
  const out: [string, number, number][] = [];
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const ms = i % 17 === 0 ? (HTTP_DURATION_BUCKETS[i % 8] as number) * 1000 : (x % 7_000_000) / 1000;
    out.push([methods[x % 4] as string, codes[(x >> 3) % 5] as number, ms]);
  }
  return out;
}

describe('HTTP request metrics', () => {
  it('read as prom-client observing each response, across scrapes', async () => {
    const ours = new Registry();
    const tally = createHttpMetrics(ours);
    const ref = reference();
    for (const seed of [1, 2, 3]) {
      for (const [method, status, ms] of responses(2_000, seed)) {
        tally(method, status, ms);
        ref.tally(method, status, ms);
      }
      expect(await ours.metrics()).toBe(await ref.registry.metrics());
      expect(await ours.getMetricsAsJSON()).toEqual(await ref.registry.getMetricsAsJSON());
    }
  });

  it('pins the buckets and counts of a few responses', async () => {
    const registry = new Registry();
    const tally = createHttpMetrics(registry);
    expect(await registry.metrics()).not.toMatch(/^durable_mcp_http_request/m);
    for (const ms of [0.5, 1, 3, 40, 2_000, 9_000]) tally('tasks/get', 200, ms);
    tally('tools/list', 401, 7);
    const text = await registry.metrics();
    const lines = text.split('\n').filter((line) => /^durable_mcp_http_request/.test(line));
    expect(lines).toEqual([
      'durable_mcp_http_requests_total{method="tasks/get",code="200"} 6',
      'durable_mcp_http_requests_total{method="tools/list",code="401"} 1',
      'durable_mcp_http_request_duration_seconds_bucket{le="0.001",method="tasks/get"} 2',
      'durable_mcp_http_request_duration_seconds_bucket{le="0.005",method="tasks/get"} 3',
      'durable_mcp_http_request_duration_seconds_bucket{le="0.01",method="tasks/get"} 3',
      'durable_mcp_http_request_duration_seconds_bucket{le="0.05",method="tasks/get"} 4',
      'durable_mcp_http_request_duration_seconds_bucket{le="0.1",method="tasks/get"} 4',
      'durable_mcp_http_request_duration_seconds_bucket{le="0.5",method="tasks/get"} 4',
      'durable_mcp_http_request_duration_seconds_bucket{le="1",method="tasks/get"} 4',
      'durable_mcp_http_request_duration_seconds_bucket{le="5",method="tasks/get"} 5',
      'durable_mcp_http_request_duration_seconds_bucket{le="+Inf",method="tasks/get"} 6',
      'durable_mcp_http_request_duration_seconds_sum{method="tasks/get"} 11.0445',
      'durable_mcp_http_request_duration_seconds_count{method="tasks/get"} 6',
      'durable_mcp_http_request_duration_seconds_bucket{le="0.001",method="tools/list"} 0',
      'durable_mcp_http_request_duration_seconds_bucket{le="0.005",method="tools/list"} 0',
      'durable_mcp_http_request_duration_seconds_bucket{le="0.01",method="tools/list"} 1',
      'durable_mcp_http_request_duration_seconds_bucket{le="0.05",method="tools/list"} 1',
      'durable_mcp_http_request_duration_seconds_bucket{le="0.1",method="tools/list"} 1',
      'durable_mcp_http_request_duration_seconds_bucket{le="0.5",method="tools/list"} 1',
      'durable_mcp_http_request_duration_seconds_bucket{le="1",method="tools/list"} 1',
      'durable_mcp_http_request_duration_seconds_bucket{le="5",method="tools/list"} 1',
      'durable_mcp_http_request_duration_seconds_bucket{le="+Inf",method="tools/list"} 1',
      'durable_mcp_http_request_duration_seconds_sum{method="tools/list"} 0.007',
      'durable_mcp_http_request_duration_seconds_count{method="tools/list"} 1',
    ]);
  });
});
