// What `durable-mcp serve` builds once its store has opened: metrics, the runtime (server, tasks, worker) and the
// HTTP handler. Nothing here is built before: without DURABLE_MCP_STATE_SECRET the server's secret is in the store.
import type { AdminApiOptions } from '../../admin/api.js';
import { createHttpHandler, type HttpHandlerOptions } from '../../http.js';
import { normalAddress, parseTrustedProxies } from '../../transport/http/client-address.js';
import type { AuditEvent } from '../../protocol/audit.js';
import type { Logger } from '../../observability/logger.js';
import { createMetrics, type Metrics } from '../../observability/metrics.js';
import type { ToolSet } from '../../protocol/define.js';
import { createDurableMcp, type DurableMcp } from '../../runtime.js';
import type { Backend } from '../../tasks/backend.js';
import type { OutOfScopeTasks } from '../../tasks/store.js';
import { combineObservers } from '../../tasks/observer.js';
import type { HttpHandler } from '../../transport/http/handler.js';
import type { AuthSetup } from '../auth-config.js';
import { logOutOfScope, logToolError, mainOrigin, storeCheck } from './serve-helpers.js';
import type { ServeSettings } from './serve-flags.js';

/** A server on its open store. */
/** What a command built on `serve` adds to the operator API: health components, the view of a gateway's tasks. */
export type AdminExtras = Pick<AdminApiOptions, 'health' | 'taskUpstream'>;

export interface Served {
  readonly runtime: DurableMcp;
  readonly handler: HttpHandler;
  readonly metrics: Metrics | undefined;
  /** Undefined while the store answers a cheap lookup, else why not (for /readyz). */
  readonly storeAnswers: () => Promise<string | undefined>;
}

interface Observability {
  logger: Logger;
  metrics: Metrics | undefined;
  audit: (event: AuditEvent) => void;
  /** The tasks this process's worker last found waiting for another tool version (for the operators' overview). */
  waiting: { last?: readonly OutOfScopeTasks[] };
}

function observabilityFor(
  settings: ServeSettings,
  backend: Backend,
  toolSets: ToolSet[],
  logger: Logger,
): Observability {
  const metrics =
    settings.metrics === false
      ? undefined
      : createMetrics(backend.tasks, Date.now, {
          statsIntervalMs: settings.metrics.statsIntervalMs,
          token: settings.metrics.token,
          // The `tool` label takes the names of the tools served; any other is counted as "other".
          tools: toolSets.flatMap((set) => (set.tools ?? []).map((tool) => tool.name)),
        });
  const auditLines = settings.audit
    ? (event: AuditEvent) => logger.info({ type: 'audit', ...event })
    : undefined;
  const audit = (event: AuditEvent): void => {
    auditLines?.(event);
    metrics?.audit(event);
  };
  return { logger, metrics, audit, waiting: {} };
}

function runtimeFor(
  settings: ServeSettings,
  backend: Backend,
  toolSets: ToolSet[],
  observability: Observability,
): DurableMcp {
  const { logger, metrics, audit } = observability;
  const { runtime, otel } = settings;
  const rate = runtime.tasksGetRate;
  return createDurableMcp({
    toolSets,
    backend,
    tracing: otel,
    publicUrl: settings.http.publicUrl,
    steps: runtime.steps,
    limits: runtime.limits,
    onToolError: (report) => logToolError(logger, report),
    server: {
      onSubscription: metrics === undefined ? undefined : (d) => metrics.subscription(d),
      maxListensPerPrincipal: runtime.maxListensPerPrincipal,
      unknownTool: runtime.unknownTool,
    },
    tasks: {
      audit,
      tasksGetRate: rate === 0 ? false : { perSecond: rate, burst: rate * 2 },
      maxActiveTasksPerPrincipal: runtime.maxActiveTasksPerPrincipal,
      maxStoredTasksPerPrincipal: runtime.maxStoredTasksPerPrincipal,
      maxActiveTasksPerTenant: runtime.maxActiveTasksPerTenant,
      maxStoredTasksPerTenant: runtime.maxStoredTasksPerTenant,
      maxStoredBytesPerPrincipal: runtime.maxStoredBytesPerPrincipal,
      fallback: runtime.fallback,
      allowCallerPriority: runtime.allowCallerPriority,
      slotWaitMs: runtime.slotWaitMs,
    },
    worker:
      runtime.worker === false
        ? false
        : {
            ...runtime.worker,
            onError: (err, taskId) => logger.error({ err, taskId }, 'worker error'),
            observer: combineObservers(metrics?.taskObserver, {
              outOfScope: (waiting) => {
                observability.waiting.last = waiting;
                logOutOfScope(logger, waiting);
              },
            }),
          },
  });
}

/**
 * The operator API and dashboard, when a credential can be an operator's; CSRF tokens from the secret every replica
 * shares; live events from the store's change feed, their streams capped and counted; payloads in the detail only
 * with --admin-payloads.
 */
function adminFor(
  http: ServeSettings['http'],
  backend: Backend,
  auth: AuthSetup,
  metrics: Metrics | undefined,
  waiting: Observability['waiting'],
  extras: AdminExtras,
): AdminApiOptions | undefined {
  if (!auth.operators || backend.tasks.admin === undefined) return undefined;
  return {
    ...extras,
    store: backend.tasks.admin,
    events: backend.tasks.events,
    secret: backend.stateSecret,
    changes: backend.tasks.changes,
    payloads: http.adminPayloads,
    eventStream: { maxPerOperator: http.adminStreams.perOperator, maxTotal: http.adminStreams.total },
    onStream: metrics === undefined ? undefined : (d) => metrics.subscription(d, 'operator'),
    waitingForCode: () => waiting.last,
  };
}

/**
 * The routes that deliver events to tasks: their owners', and the callback URLs signed with the secret every replica
 * shares; callbacks counted per client address (behind --trust-proxy proxies, the client they forward).
 */
function eventsFor(
  http: ServeSettings['http'],
  backend: Backend,
  runtime: DurableMcp,
): HttpHandlerOptions['events'] {
  const events = backend.tasks.events;
  if (events === undefined) return undefined;
  const trusted = parseTrustedProxies(http.limits.trustProxy ?? []);
  const proxies = trusted.ok && (http.limits.trustProxy ?? []).length > 0 ? trusted.value : undefined;
  return {
    events,
    tokens: runtime.callbackTokens,
    clientAddress: (req) => {
      const peer = normalAddress(req.socket.remoteAddress ?? '');
      if (proxies === undefined || !proxies.trusts(peer)) return peer;
      const forwarded = req.headers['x-forwarded-for'];
      return proxies.clientOf(peer, Array.isArray(forwarded) ? forwarded.join(',') : forwarded);
    },
  };
}

function handlerFor(
  settings: ServeSettings,
  runtime: DurableMcp,
  backend: Backend,
  auth: AuthSetup,
  readiness: () => Promise<string | undefined>,
  { logger, metrics, audit, waiting }: Observability,
  extras: AdminExtras,
): HttpHandler {
  const { http } = settings;
  // With a port of its own, /metrics is not served on the MCP port.
  const metricsHere =
    settings.metrics !== false && settings.metrics.listen === undefined ? metrics : undefined;
  return createHttpHandler({
    server: runtime.server,
    readiness,
    authenticator: auth.authenticator,
    protectedResourceMetadata: auth.metadata,
    origin: mainOrigin(http, logger),
    keepAliveMs: http.keepAliveMs,
    maxBodyBytes: http.maxBodyBytes,
    audit,
    // Legacy (2025-11-25) sessions and tasks/list live in the backend, so every replica serves every session.
    legacy:
      http.legacy === false ? false : { store: backend.tasks, sessions: backend.sessions, ...http.legacy },
    extraRoutes: metricsHere === undefined ? undefined : (req, res) => metricsHere.route(req, res),
    admin: adminFor(http, backend, auth, metrics, waiting, extras),
    events: eventsFor(http, backend, runtime),
    onError: (err) => logger.error({ err }, 'request failed'),
    maxBufferedBytes: http.maxBufferedBytes,
    onResponse: (method, status, ms) => {
      metrics?.httpResponse(method, status, ms);
      if (logger.isLevelEnabled('debug'))
        logger.debug({ method, status, ms: Math.round(ms * 10) / 10 }, 'request');
    },
  });
}

/** The runtime alone, for stdio (no HTTP handler, no readiness). */
export function runtimeOn(
  settings: ServeSettings,
  backend: Backend,
  toolSets: ToolSet[],
  logger: Logger,
): DurableMcp {
  return runtimeFor(settings, backend, toolSets, observabilityFor(settings, backend, toolSets, logger));
}

/**
 * Builds the server on its open store. `readiness` is what `/readyz` answers (draining first); the store's own
 * answer is `storeAnswers`.
 */
export function serveOn(
  settings: ServeSettings,
  backend: Backend,
  toolSets: ToolSet[],
  logger: Logger,
  auth: AuthSetup,
  readiness: () => Promise<string | undefined>,
  extras: AdminExtras = {},
): Served {
  const observability = observabilityFor(settings, backend, toolSets, logger);
  const runtime = runtimeFor(settings, backend, toolSets, observability);
  return {
    runtime,
    handler: handlerFor(settings, runtime, backend, auth, readiness, observability, extras),
    metrics: observability.metrics,
    storeAnswers: storeCheck(backend, logger),
  };
}
