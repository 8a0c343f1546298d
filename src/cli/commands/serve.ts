// `durable-mcp serve`: the HTTP (or stdio) server on the configured store and tool sets.
import { storeFrom, openBackend } from '../store-config.js';
import { createHttpHandler } from '../../http.js';
import type { AuditEvent } from '../../protocol/audit.js';
import { createLogger, type Logger } from '../../observability/logger.js';
import type { StepDefaults } from '../../protocol/define.js';
import { createMetrics, DEFAULT_STATS_INTERVAL_MS } from '../../observability/metrics.js';
import { createTracingObserver, traced } from '../../observability/tracing.js';
import { combineObservers } from '../../tasks/observer.js';
import { createPayloadCipher, parseKeyring } from '../../tasks/payload-cipher.js';
import { buildAuth, type AuthSetup } from '../auth-config.js';
import { listenHttp } from '../../transport/http/node-server.js';
import { serveStdio } from '../../transport/stdio/stdio.js';
import { allowedHostsFor, createDurableMcp, urlHost, type DurableMcp } from '../../runtime.js';
import type { Backend } from '../../tasks/backend.js';
import type { PayloadCipher } from '../../tasks/payload-cipher.js';
import type { Metrics } from '../../observability/metrics.js';
import { intFlag, parseFlags, UsageError } from '../args.js';
import { VERSION } from '../../version.js';
import { loadToolSets } from '../tool-sets.js';
import { DEFAULT_FALLBACK_BUDGET_MS, type FallbackOptions } from '../../protocol/tasks/fallback.js';

import { logOutOfScope, logToolError, refusalLog, storeCheck } from './serve-helpers.js';

export { serveUsage } from './serve-usage.js';

function stepDefaultsFromFlags(
  values: Record<string, string | boolean | undefined>,
): StepDefaults | undefined {
  const steps: StepDefaults = {};
  if (values['step-max-attempts'] !== undefined) {
    steps.retry = { maxAttempts: intFlag(values['step-max-attempts'], 'step-max-attempts', 1, 1) };
  }
  if (values['step-timeout-ms'] !== undefined) {
    steps.timeoutMs = intFlag(values['step-timeout-ms'], 'step-timeout-ms', 0, 1);
  }
  return Object.keys(steps).length === 0 ? undefined : steps;
}

function fallbackFromFlags(values: Record<string, string | boolean | undefined>): FallbackOptions | false {
  if (values['no-fallback'] === true) return false;
  const prefix = values['fallback-tool-prefix'] as string | undefined;
  if (prefix !== undefined && !/^[A-Za-z0-9_.-]{0,100}$/.test(prefix)) {
    throw new UsageError('--fallback-tool-prefix may hold only letters, digits, _ . and - (at most 100)');
  }
  return {
    budgetMs: intFlag(values['fallback-budget-ms'], 'fallback-budget-ms', DEFAULT_FALLBACK_BUDGET_MS),
    required: values['fallback-required'] === true,
    toolPrefix: prefix,
  };
}

const SERVE_FLAGS = {
  host: { type: 'string' },
  port: { type: 'string' },
  store: { type: 'string' },
  tools: { type: 'string' },
  'allowed-hosts': { type: 'string' },
  'keep-alive-ms': { type: 'string' },
  'no-legacy': { type: 'boolean' },
  'no-migrate': { type: 'boolean' },
  'drain-ms': { type: 'string' },
  'shutdown-grace-ms': { type: 'string' },
  'max-sessions': { type: 'string' },
  'legacy-result-wait-ms': { type: 'string' },
  'max-connections': { type: 'string' },
  'max-listens': { type: 'string' },
  'max-buffered-mb': { type: 'string' },
  'request-timeout-ms': { type: 'string' },
  stdio: { type: 'boolean' },
  concurrency: { type: 'string' },
  'lease-ms': { type: 'string' },
  'removed-tool-drain-ms': { type: 'string' },
  'step-max-attempts': { type: 'string' },
  'step-timeout-ms': { type: 'string' },
  'fallback-budget-ms': { type: 'string' },
  'fallback-required': { type: 'boolean' },
  'fallback-tool-prefix': { type: 'string' },
  'no-fallback': { type: 'boolean' },
  auth: { type: 'string' },
  'jwt-issuer': { type: 'string' },
  'jwt-audience': { type: 'string' },
  jwks: { type: 'string' },
  'jwt-tenant-claims': { type: 'string' },
  'jwt-principal-claim': { type: 'string' },
  'resource-url': { type: 'string' },
  'encryption-key': { type: 'string' },
  encrypt: { type: 'string' },
  'tasks-get-rate': { type: 'string' },
  'max-active-tasks': { type: 'string' },
  'max-stored-tasks': { type: 'string' },
  'max-active-tasks-per-tenant': { type: 'string' },
  'max-stored-tasks-per-tenant': { type: 'string' },
  'no-audit': { type: 'boolean' },
  'log-level': { type: 'string' },
  'pg-schema': { type: 'string' },
  'pg-pool-size': { type: 'string' },
  'pg-statement-timeout-ms': { type: 'string' },
  'pg-no-prepared-statements': { type: 'boolean' },
  'no-metrics': { type: 'boolean' },
  'metrics-stats-interval-ms': { type: 'string' },
  otel: { type: 'boolean' },
} as const;

type Flags = Record<string, string | boolean | undefined>;

function cipherFromFlags(values: Flags): { cipher: PayloadCipher | undefined; encrypt: 'all' | 'sensitive' } {
  const keySpec = (values['encryption-key'] as string | undefined) ?? process.env.DURABLE_MCP_ENCRYPTION_KEY;
  const encrypt = (values.encrypt as string | undefined) ?? 'all';
  if (encrypt !== 'all' && encrypt !== 'sensitive')
    throw new UsageError('--encrypt must be all or sensitive');
  try {
    return {
      cipher: keySpec === undefined ? undefined : createPayloadCipher(parseKeyring(keySpec)),
      encrypt,
    };
  } catch (err) {
    throw new UsageError(`--encryption-key: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function backendFromFlags(values: Flags, cipher: ReturnType<typeof cipherFromFlags>): Promise<Backend> {
  const store = storeFrom(values.store) ?? './data/tasks.db';
  const optionalInt = (name: string, fallback: number): number | undefined =>
    values[name] === undefined ? undefined : intFlag(values[name], name, fallback);
  try {
    return await openBackend({
      store,
      pgSchema: values['pg-schema'] as string | undefined,
      pgPoolSize: optionalInt('pg-pool-size', 10),
      pgStatementTimeoutMs: optionalInt('pg-statement-timeout-ms', 30_000),
      pgPreparedStatements: values['pg-no-prepared-statements'] !== true,
      migrate: values['no-migrate'] !== true,
      ...cipher,
    });
  } catch (err) {
    throw new Error(`--store: ${err instanceof Error ? err.message : String(err)}`);
  }
}

interface Observability {
  logger: Logger;
  metrics: Metrics | undefined;
  audit: (event: AuditEvent) => void;
}

function observabilityFromFlags(values: Flags, backend: Backend): Observability {
  const logger = createLogger((values['log-level'] as string | undefined) ?? 'info');
  const statsIntervalMs = intFlag(
    values['metrics-stats-interval-ms'],
    'metrics-stats-interval-ms',
    DEFAULT_STATS_INTERVAL_MS,
  );
  const metrics =
    values['no-metrics'] === true ? undefined : createMetrics(backend.tasks, Date.now, { statsIntervalMs });
  const auditLines =
    values['no-audit'] === true ? undefined : (event: AuditEvent) => logger.info({ type: 'audit', ...event });
  const audit = (event: AuditEvent): void => {
    auditLines?.(event);
    metrics?.audit(event);
  };
  return { logger, metrics, audit };
}

function runtimeFromFlags(
  values: Flags,
  backend: Backend,
  toolSets: Awaited<ReturnType<typeof loadToolSets>>,
  { logger, metrics, audit }: Observability,
): DurableMcp {
  const concurrency = intFlag(values.concurrency, 'concurrency', 8);
  const leaseMs = intFlag(values['lease-ms'], 'lease-ms', 30_000);
  const rate = intFlag(values['tasks-get-rate'], 'tasks-get-rate', 100);
  return createDurableMcp({
    toolSets,
    backend,
    steps: stepDefaultsFromFlags(values),
    onToolError: (report) => logToolError(logger, report),
    server: {
      onSubscription: metrics === undefined ? undefined : (d) => metrics.subscription(d),
      wrapDispatch: values.otel === true ? (method, run) => traced(method, run) : undefined,
      maxListensPerPrincipal: intFlag(values['max-listens'], 'max-listens', 100),
    },
    tasks: {
      audit,
      tasksGetRate: rate === 0 ? false : { perSecond: rate, burst: rate * 2 },
      maxActiveTasksPerPrincipal: intFlag(values['max-active-tasks'], 'max-active-tasks', 1_000),
      maxStoredTasksPerPrincipal: intFlag(values['max-stored-tasks'], 'max-stored-tasks', 10_000),
      maxActiveTasksPerTenant: intFlag(
        values['max-active-tasks-per-tenant'],
        'max-active-tasks-per-tenant',
        0,
      ),
      maxStoredTasksPerTenant: intFlag(
        values['max-stored-tasks-per-tenant'],
        'max-stored-tasks-per-tenant',
        0,
      ),
      fallback: fallbackFromFlags(values),
    },
    worker:
      concurrency === 0
        ? false
        : {
            concurrency,
            leaseMs: Math.max(300, leaseMs),
            onError: (err, taskId) => logger.error({ err, taskId }, 'worker error'),
            removedToolDrainMs: intFlag(values['removed-tool-drain-ms'], 'removed-tool-drain-ms', 3_600_000),
            observer: combineObservers(
              metrics?.taskObserver,
              values.otel === true ? createTracingObserver() : undefined,
              { outOfScope: (waiting) => logOutOfScope(logger, waiting) },
            ),
          },
  });
}

const authFlags = (values: Flags) => ({
  auth: values.auth as string | undefined,
  jwtIssuer: values['jwt-issuer'] as string | undefined,
  jwtAudience: values['jwt-audience'] as string | undefined,
  jwks: values.jwks as string | undefined,
  jwtTenantClaims: values['jwt-tenant-claims'] as string | undefined,
  jwtPrincipalClaim: values['jwt-principal-claim'] as string | undefined,
});

/** Binds the port, then builds the handler once with everything it needs, the URL of this endpoint included. */
async function listenFromFlags(
  values: Flags,
  runtime: DurableMcp,
  backend: Backend,
  { logger, metrics, audit }: Observability,
  readiness: () => Promise<string | undefined>,
): Promise<{ running: Awaited<ReturnType<typeof listenHttp>>; auth: AuthSetup; shownUrl: string }> {
  const host = (values.host as string | undefined) ?? '127.0.0.1';
  const port = intFlag(values.port, 'port', 3000);
  const boundHost = urlHost(host);
  const extraHosts = ((values['allowed-hosts'] as string | undefined) ?? '').split(',');
  const keepAliveMs = intFlag(values['keep-alive-ms'], 'keep-alive-ms', 15_000);
  let auth: AuthSetup | undefined;
  const running = await listenHttp(
    {
      build: ({ port: boundPort }) => {
        const resourceUrl =
          (values['resource-url'] as string | undefined) ?? `http://${boundHost}:${boundPort}/mcp`;
        auth = buildAuth(authFlags(values), resourceUrl);
        return createHttpHandler({
          server: runtime.server,
          readiness,
          authenticator: auth.authenticator,
          protectedResourceMetadata: auth.metadata,
          origin: { allowedHosts: allowedHostsFor(host, extraHosts), onRefused: refusalLog(logger) },
          keepAliveMs,
          audit,
          // Legacy (2025-11-25) sessions and tasks/list live in the backend, so every replica serves every session.
          legacy:
            values['no-legacy'] === true
              ? false
              : {
                  store: backend.tasks,
                  sessions: backend.sessions,
                  maxSessionsPerPrincipal: intFlag(values['max-sessions'], 'max-sessions', 1_000),
                  // Shorter windows would have clients reconnect all the time.
                  resultWaitMs: intFlag(
                    values['legacy-result-wait-ms'],
                    'legacy-result-wait-ms',
                    60_000,
                    100,
                  ),
                },
          extraRoutes: metrics === undefined ? undefined : (req, res) => metrics.route(req, res),
          onError: (err) => logger.error({ err }, 'request failed'),
          maxBufferedBytes: intFlag(values['max-buffered-mb'], 'max-buffered-mb', 64) * 1024 * 1024,
          onResponse: (method, status, ms) => {
            metrics?.httpResponse(method, status, ms);
            if (logger.isLevelEnabled('debug'))
              logger.debug({ method, status, ms: Math.round(ms * 10) / 10 }, 'request');
          },
        });
      },
    },
    host,
    port,
    '/mcp',
    {
      maxConnections: intFlag(values['max-connections'], 'max-connections', 1024),
      requestTimeoutMs: intFlag(values['request-timeout-ms'], 'request-timeout-ms', 30_000),
    },
  );
  return { running, auth: auth as AuthSetup, shownUrl: `http://${boundHost}:${running.port}/mcp` };
}

function announce(logger: Logger, auth: AuthSetup, cipher: ReturnType<typeof cipherFromFlags>): void {
  const reload = auth.reload;
  if (reload !== undefined) {
    process.on('SIGHUP', () => {
      const problem = reload();
      if (problem === undefined) logger.info('SIGHUP: credentials reloaded');
      else logger.warn({ problem }, 'SIGHUP: kept the previous credentials');
    });
  }
  if (auth.authenticator.mode === 'anonymous') logger.warn(`auth: ${auth.describe}`);
  else logger.info(`auth: ${auth.describe}`);
  if (cipher.cipher !== undefined)
    logger.info({ encrypt: cipher.encrypt, keyId: cipher.cipher.currentKeyId }, 'encryption at rest');
}

export async function serve(argv: string[]): Promise<void> {
  const { values } = parseFlags(argv, SERVE_FLAGS);
  // Usage errors first, before anything is opened.
  if (intFlag(values.port, 'port', 3000) > 65535) throw new UsageError('--port must be at most 65535');
  for (const [flag, least] of [
    ['max-connections', 1],
    ['max-buffered-mb', 1],
    ['request-timeout-ms', 100],
    // Shorter windows would have 2025-11-25 clients reconnect all the time.
    ['legacy-result-wait-ms', 100],
  ] as const)
    intFlag(values[flag], flag, least, least);
  const toolSets = await loadToolSets((values.tools as string | undefined) ?? 'demo');
  const cipher = cipherFromFlags(values);
  const backend = await backendFromFlags(values, cipher);
  const observability = observabilityFromFlags(values, backend);
  const runtime = runtimeFromFlags(values, backend, toolSets, observability);
  const graceMs = intFlag(values['shutdown-grace-ms'], 'shutdown-grace-ms', 10_000);
  const shutdown = (): Promise<void> => runtime.close(graceMs);
  let draining = false;
  const storeAnswers = storeCheck(backend, observability.logger);
  const readiness = async (): Promise<string | undefined> => (draining ? 'draining' : storeAnswers());

  if (values.stdio === true) {
    await serveStdio({ server: runtime.server, input: process.stdin, output: process.stdout });
    await shutdown();
    return;
  }
  let listening;
  try {
    listening = await listenFromFlags(values, runtime, backend, observability, readiness);
  } catch (err) {
    await shutdown();
    throw err;
  }
  const { running, auth, shownUrl } = listening;
  const { logger } = observability;
  // Last resort: an error no request, run or stream caught is logged, and the server goes on serving the others.
  process.on('uncaughtException', (err) => logger.error({ err }, 'uncaught error; still serving'));
  process.on('unhandledRejection', (err) => logger.error({ err }, 'unhandled rejection; still serving'));
  announce(logger, auth, cipher);
  // Which release, on which store (password hidden), with its schema migrated (or checked, with --no-migrate).
  logger.info({ version: VERSION, store: backend.description }, 'serving');

  let stopping = false;
  const drainMs = intFlag(values['drain-ms'], 'drain-ms', 0);
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    // Not ready at once; still serving while the balancer notices, then closing with a grace for what is in flight.
    draining = true;
    logger.info({ drainMs, graceMs }, `${signal}: not ready; shutting down`);
    if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
    const closing = running.close(graceMs);
    await runtime.server.close();
    await closing;
    await shutdown();
    logger.flush(() => process.exit(0));
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // Printed last: once a caller sees it, signals are handled.
  console.log(`listening on ${shownUrl}`);
}
