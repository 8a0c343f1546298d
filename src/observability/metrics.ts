// Prometheus metrics (prom-client): tasks by status, creations, completions, run durations, lease takeovers,
// runnable backlog, input waits, HTTP requests by method and code, open subscriptions.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuditEvent } from '../protocol/audit.js';
import type { TaskObserver } from '../tasks/observer.js';
import type { TaskStore } from '../tasks/store.js';
import { createStatsCache } from './stats-cache.js';

export interface Metrics {
  readonly registry: Registry;
  readonly taskObserver: TaskObserver;
  audit(event: AuditEvent): void;
  httpResponse(method: string, status: number, durationMs: number): void;
  subscription(delta: 1 | -1): void;
  /** Serves GET /metrics; returns true when it handled the request. */
  route(req: IncomingMessage, res: ServerResponse): boolean;
}

export interface MetricsOptions {
  /**
   * Minimum time between two reads of the store's task counts (default 5000 ms; 0 reads on every scrape).
   * Scrapes in between show the last counts read; concurrent scrapes share one read.
   */
  statsIntervalMs?: number;
}

export const DEFAULT_STATS_INTERVAL_MS = 5_000;

/** JSON-RPC methods get their own label; anything else is counted as "other" (bounded label values). */
const KNOWN_METHODS = new Set([
  'server/discover',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'completion/complete',
  'subscriptions/listen',
  'tasks/get',
  'tasks/update',
  'tasks/cancel',
]);

export function createMetrics(
  store: TaskStore,
  now: () => number = Date.now,
  options: MetricsOptions = {},
): Metrics {
  const registry = new Registry();
  const p = 'durable_mcp_';
  const tasks = new Gauge({
    name: `${p}tasks`,
    help: 'Stored tasks by status',
    labelNames: ['status'],
    registers: [registry],
  });
  const backlog = new Gauge({
    name: `${p}runnable_backlog`,
    help: 'Tasks waiting for a worker',
    registers: [registry],
  });
  const inputWaits = new Gauge({
    name: `${p}input_waits`,
    help: 'Tasks waiting for client input',
    registers: [registry],
  });
  const created = new Counter({
    name: `${p}task_creations_total`,
    help: 'Tasks created',
    labelNames: ['tool'],
    registers: [registry],
  });
  const ended = new Counter({
    name: `${p}task_runs_total`,
    help: 'Task runs by how they ended (completed, failed, cancelled, input_required, waiting, released)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const durations = new Histogram({
    name: `${p}task_run_duration_seconds`,
    help: 'Duration of task runs (one run lasts until the task ends or waits for input)',
    labelNames: ['outcome'],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1800],
    registers: [registry],
  });
  const toolErrors = new Counter({
    name: `${p}tool_errors_total`,
    help: 'Errors thrown by tool handlers (kept with their task, or answered as an isError result)',
    labelNames: ['tool'],
    registers: [registry],
  });
  const takeovers = new Counter({
    name: `${p}lease_takeovers_total`,
    help: 'Runs that took over an expired lease',
    registers: [registry],
  });
  const denied = new Counter({
    name: `${p}access_denied_total`,
    help: 'Refused task or credential checks',
    labelNames: ['event'],
    registers: [registry],
  });
  const http = new Counter({
    name: `${p}http_requests_total`,
    help: 'HTTP requests',
    labelNames: ['method', 'code'],
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: `${p}http_request_duration_seconds`,
    help: 'HTTP request duration (time to the end of the response; long for subscriptions)',
    labelNames: ['method'],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [registry],
  });
  const subscriptions = new Gauge({
    name: `${p}open_subscriptions`,
    help: 'Open subscriptions/listen streams',
    registers: [registry],
  });

  const httpChildren = new Map<string, { count: { inc(): void }; duration: { observe(v: number): void } }>();

  const read = store.stats?.bind(store);
  const statsCache =
    read === undefined
      ? undefined
      : createStatsCache(read, Math.max(0, options.statsIntervalMs ?? DEFAULT_STATS_INTERVAL_MS), now);
  const collect = async (): Promise<void> => {
    const stats = await statsCache?.get();
    if (stats === undefined) return;
    for (const [status, n] of Object.entries(stats.byStatus)) tasks.set({ status }, n);
    backlog.set(stats.runnable);
    inputWaits.set(stats.byStatus.input_required);
  };

  return {
    registry,
    taskObserver: {
      runStarted(run) {
        if (run.takenOver) takeovers.inc();
      },
      runFinished(_run, outcome, durationMs) {
        ended.inc({ outcome });
        durations.observe({ outcome }, durationMs / 1000);
      },
      toolError(report) {
        toolErrors.inc({ tool: report.tool });
      },
    },
    audit(event) {
      if (event.event === 'task.created') created.inc({ tool: event.tool ?? 'unknown' });
      else if (
        event.event === 'task.denied' ||
        event.event === 'auth.denied' ||
        event.event === 'task.limited'
      ) {
        denied.inc({ event: event.event });
      }
    },
    httpResponse(method, status, durationMs) {
      const label = KNOWN_METHODS.has(method) ? method : 'other';
      const key = `${label} ${status}`;
      let child = httpChildren.get(key);
      if (child === undefined) {
        // Labelled children are looked up once per (method, code): no label hashing per request.
        child = { count: http.labels(label, String(status)), duration: httpDuration.labels(label) };
        httpChildren.set(key, child);
      }
      child.count.inc();
      child.duration.observe(durationMs / 1000);
    },
    subscription(delta) {
      subscriptions.inc(delta);
    },
    route(req, res) {
      if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') return false;
      collect()
        .then(() => registry.metrics())
        .then(
          (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body),
          // Not reached in practice: a failed store read keeps the last good counts (see stats-cache.ts).
          () => res.writeHead(503, { 'content-type': 'text/plain' }).end('metrics unavailable\n'),
        );
      return true;
    },
  };
}
