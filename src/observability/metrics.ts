// Prometheus metrics (prom-client): tasks by status, runnable backlog, input waits, HTTP requests by method and code,
// open subscriptions, the process, and the task metrics by tool (task-metrics.ts); served on GET /metrics.
import { SERVED_METHODS } from '../wire/methods.js';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { createHash, timingSafeEqual } from 'node:crypto';
import { VERSION } from '../version.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuditEvent } from '../protocol/audit.js';
import type { TaskObserver } from '../tasks/observer.js';
import type { TaskStore } from '../tasks/store.js';
import { createHttpMetrics, type HttpTally } from './http-metrics.js';
import { createStatsCache } from './stats-cache.js';
import { createTaskMetrics } from './task-metrics.js';
import { createToolLabels } from './tool-labels.js';

export interface Metrics {
  readonly registry: Registry;
  readonly taskObserver: TaskObserver;
  audit(event: AuditEvent): void;
  httpResponse(method: string, status: number, durationMs: number): void;
  /** An event stream opened (1) or ended (-1): `listen` (subscriptions/listen) or `operator` (the operator API's). */
  subscription(delta: 1 | -1, kind?: StreamKind): void;
  /** Serves GET /metrics; returns true when it handled the request. */
  route(req: IncomingMessage, res: ServerResponse): boolean;
}

/** The event streams the open streams gauge counts apart. */
export type StreamKind = 'listen' | 'operator';

export interface MetricsOptions {
  /**
   * Minimum time between two reads of the store's task counts (default 5000 ms; 0 reads on every scrape).
   * Scrapes in between show the last counts read; concurrent scrapes share one read.
   */
  statsIntervalMs?: number;
  /** When set, GET /metrics answers only requests with `Authorization: Bearer <token>` (others get 401). */
  token?: string;
  /**
   * The tools the server serves: only these get a `tool` label of their own (the first `maxToolLabels`), any other
   * tool is counted as "other". Without it, the first `maxToolLabels` distinct tools seen get one.
   */
  tools?: Iterable<string>;
  /** Default MAX_TOOL_LABELS (100). */
  maxToolLabels?: number;
}

export const DEFAULT_STATS_INTERVAL_MS = 5_000;

/** JSON-RPC methods get their own label; anything else is counted as "other" (bounded label values). */
const KNOWN_METHODS: ReadonlySet<string> = new Set(SERVED_METHODS);

const P = 'durable_mcp_';

/** The gauges of the store's task counts, set from its stats on each scrape. */
function storeGauges(registry: Registry) {
  return {
    tasks: new Gauge({
      name: `${P}tasks`,
      help: 'Stored tasks by status',
      labelNames: ['status'],
      registers: [registry],
    }),
    backlog: new Gauge({
      name: `${P}runnable_backlog`,
      help: 'Tasks waiting for a worker',
      registers: [registry],
    }),
    inputWaits: new Gauge({
      name: `${P}input_waits`,
      help: 'Tasks waiting for client input',
      registers: [registry],
    }),
    slotWaits: new Gauge({
      name: `${P}slot_waits`,
      help: 'Working tasks parked until a slot of their concurrency key frees',
      registers: [registry],
    }),
    toolSlotWaits: new Gauge({
      name: `${P}tool_slot_waits`,
      help: 'Working tasks parked until a slot of their concurrency key frees, by tool (tools with none absent)',
      labelNames: ['tool'],
      registers: [registry],
    }),
    toolRateWaits: new Gauge({
      name: `${P}tool_rate_waits`,
      help: 'Working tasks waiting for the start reserved under the rate limit of their key, by tool (tools with none absent)',
      labelNames: ['tool'],
      registers: [registry],
    }),
    toolPaused: new Gauge({
      name: `${P}tool_paused`,
      help: 'Working tasks held back by an operator’s pause of their tool or key, by tool (tools with none absent)',
      labelNames: ['tool'],
      registers: [registry],
    }),
  };
}

/** Open subscriptions (registered after the HTTP request metrics, as /metrics lists them). */
function subscriptionGauge(registry: Registry) {
  return new Gauge({
    name: `${P}open_subscriptions`,
    help: 'Open event streams: subscriptions/listen (kind="listen") and the operator API\'s (kind="operator")',
    labelNames: ['kind'],
    registers: [registry],
  });
}

/** Reads the store's task counts (at most once per interval) into the gauges; nothing when the store has none. */
function statsCollector(
  store: TaskStore,
  gauges: ReturnType<typeof storeGauges>,
  intervalMs: number,
  now: () => number,
  toolLabel: (tool: string) => string,
): () => Promise<void> {
  const read = store.stats?.bind(store);
  const statsCache = read === undefined ? undefined : createStatsCache(read, Math.max(0, intervalMs), now);
  return async () => {
    const stats = await statsCache?.get();
    if (stats === undefined) return;
    for (const [status, n] of Object.entries(stats.byStatus)) gauges.tasks.set({ status }, n);
    gauges.backlog.set(stats.runnable);
    gauges.inputWaits.set(stats.byStatus.input_required);
    if (stats.parked !== undefined) gauges.slotWaits.set(stats.parked);
    if (stats.parkedByTool !== undefined) setByTool(gauges.toolSlotWaits, stats.parkedByTool, toolLabel);
    if (stats.rateWaitsByTool !== undefined)
      setByTool(gauges.toolRateWaits, stats.rateWaitsByTool, toolLabel);
    if (stats.pausedByTool !== undefined) setByTool(gauges.toolPaused, stats.pausedByTool, toolLabel);
  };
}

/**
 * Sets a gauge by tool anew on each read: a tool whose tasks no longer wait drops out. Tools past the label cap add
 * up in "other".
 */
function setByTool(
  gauge: Gauge<'tool'>,
  byTool: Record<string, number>,
  toolLabel: (tool: string) => string,
): void {
  const byLabel = new Map<string, number>();
  for (const [tool, n] of Object.entries(byTool))
    byLabel.set(toolLabel(tool), (byLabel.get(toolLabel(tool)) ?? 0) + n);
  gauge.reset();
  for (const [tool, n] of byLabel) gauge.set({ tool }, n);
}

/**
 * The store's creation batches (TaskStore.creationBatches; PostgreSQL's group commit), read on each scrape: how many
 * ended, the creations they took and their summed round trips, so that rate(tasks) ÷ rate(batches) is the mean batch
 * and rate(seconds) ÷ rate(batches) its mean round trip. Nothing when the store keeps none.
 */
function creationBatchCounters(store: TaskStore, registry: Registry): void {
  const read = store.creationBatches?.bind(store);
  if (read === undefined) return;
  const counter = (name: string, help: string, field: 'batches' | 'tasks' | 'seconds'): void => {
    new Counter({
      name: `${P}${name}`,
      help,
      registers: [registry],
      collect() {
        // A counter of the store's own totals: set to them (they only grow).
        this.reset();
        this.inc(read()[field]);
      },
    });
  };
  counter(
    'store_creation_batches_total',
    'Creation batches the store committed (or failed) as one statement',
    'batches',
  );
  counter('store_creation_batch_tasks_total', 'Creations those batches took', 'tasks');
  counter(
    'store_creation_batch_seconds_total',
    'Time those batches took from leaving the queue to settling, summed (the statement, its commit, the read of its answer)',
    'seconds',
  );
}

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/** Whether a request carries the bearer token: compared in constant time (digests of equal length). */
function bearerCheck(token: string | undefined): (req: IncomingMessage) => boolean {
  if (token === undefined) return () => true;
  const expected = digest(token);
  return (req) => {
    const match = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
    return timingSafeEqual(digest(match?.[1] ?? ''), expected) && match !== null;
  };
}

/** Counts an HTTP response under its method (or "other") and status code. */
function httpRecorder(tally: HttpTally): Metrics['httpResponse'] {
  return (method, status, durationMs) =>
    tally(KNOWN_METHODS.has(method) ? method : 'other', status, durationMs);
}

export function createMetrics(
  store: TaskStore,
  now: () => number = Date.now,
  options: MetricsOptions = {},
): Metrics {
  const registry = new Registry();
  // The process (memory, CPU, event-loop lag, handles) and the version each replica runs.
  collectDefaultMetrics({ register: registry, prefix: P });
  new Gauge({
    name: `${P}build_info`,
    help: 'Always 1; the version label says which release this process runs',
    labelNames: ['version'],
    registers: [registry],
  }).set({ version: VERSION }, 1);
  const gauges = storeGauges(registry);
  const toolLabel = createToolLabels({ tools: options.tools, max: options.maxToolLabels });
  const tasks = createTaskMetrics(registry, toolLabel);
  const http = createHttpMetrics(registry);
  const subscriptions = subscriptionGauge(registry);
  // Both kinds shown from the start, at 0.
  for (const kind of ['listen', 'operator'] as const) subscriptions.set({ kind }, 0);
  creationBatchCounters(store, registry);
  const intervalMs = options.statsIntervalMs ?? DEFAULT_STATS_INTERVAL_MS;
  const collect = statsCollector(store, gauges, intervalMs, now, toolLabel);
  const allowed = bearerCheck(options.token);

  return {
    registry,
    taskObserver: tasks.observer,
    audit: (event) => tasks.audit(event),
    httpResponse: httpRecorder(http),
    subscription(delta, kind = 'listen') {
      subscriptions.inc({ kind }, delta);
    },
    route(req, res) {
      if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') return false;
      if (!allowed(req)) {
        res
          .writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer realm="metrics"' })
          .end('metrics need a bearer token\n');
        return true;
      }
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
