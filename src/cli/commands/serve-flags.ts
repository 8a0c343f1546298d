// The flags of `durable-mcp serve`, checked at once into settings: a usage error (exit 2) comes before anything opens.
import type { StepDefaults } from '../../protocol/define.js';
import { DEFAULT_FALLBACK_BUDGET_MS, type FallbackOptions } from '../../protocol/tasks/fallback.js';
import { DEFAULT_STATS_INTERVAL_MS } from '../../observability/metrics.js';
import {
  DEFAULT_MAX_STORED_BYTES_PER_PRINCIPAL,
  DEFAULT_TASK_LIMITS,
  type TaskLimits,
} from '../../tasks/limits.js';
import { createPayloadCipher, parseKeyring, type PayloadCipher } from '../../tasks/payload-cipher.js';
import { parseTrustedProxies } from '../../transport/http/client-address.js';
import type { ListenHttpOptions } from '../../transport/http/node-server.js';
import { intFlag, UsageError } from '../args.js';
import { publicHosts, publicUrlFlag } from '../public-url.js';
import { authFlagsFrom, type AuthFlags } from '../auth-config.js';
import { storeFrom, type StoreFlags } from '../store-config.js';
import { parseToolConcurrency } from '../tool-concurrency.js';
import type { RuntimeSettings } from './runtime-settings.js';

export const SERVE_FLAGS = {
  host: { type: 'string' },
  port: { type: 'string' },
  store: { type: 'string' },
  tools: { type: 'string' },
  'allowed-hosts': { type: 'string' },
  'keep-alive-ms': { type: 'string' },
  'http-keep-alive-timeout-ms': { type: 'string' },
  'max-body-mb': { type: 'string' },
  'no-legacy': { type: 'boolean' },
  'no-migrate': { type: 'boolean' },
  'drain-ms': { type: 'string' },
  'shutdown-grace-ms': { type: 'string' },
  'max-sessions': { type: 'string' },
  'legacy-result-wait-ms': { type: 'string' },
  'max-connections': { type: 'string' },
  'max-connections-per-source': { type: 'string' },
  'trust-proxy': { type: 'string' },
  'headers-timeout-ms': { type: 'string' },
  'max-admin-streams': { type: 'string' },
  'max-admin-streams-total': { type: 'string' },
  'max-listens': { type: 'string' },
  'max-buffered-mb': { type: 'string' },
  'request-timeout-ms': { type: 'string' },
  stdio: { type: 'boolean' },
  concurrency: { type: 'string' },
  'tool-concurrency': { type: 'string', multiple: true },
  'lease-ms': { type: 'string' },
  'removed-tool-drain-ms': { type: 'string' },
  'step-max-attempts': { type: 'string' },
  'step-timeout-ms': { type: 'string' },
  'fallback-budget-ms': { type: 'string' },
  'fallback-required': { type: 'boolean' },
  'fallback-tool-prefix': { type: 'string' },
  'no-fallback': { type: 'boolean' },
  'allow-caller-priority': { type: 'boolean' },
  'slot-wait-ms': { type: 'string' },
  auth: { type: 'string' },
  'jwt-issuer': { type: 'string' },
  'jwt-audience': { type: 'string' },
  jwks: { type: 'string' },
  'jwt-tenant-claims': { type: 'string' },
  'jwt-principal-claim': { type: 'string' },
  'jwt-operator-scope': { type: 'string' },
  'jwt-operator-claim': { type: 'string' },
  'jwt-operator-tenants-claim': { type: 'string' },
  'dev-operator': { type: 'boolean' },
  'admin-payloads': { type: 'boolean' },
  'resource-url': { type: 'string' },
  'public-url': { type: 'string' },
  'encryption-key': { type: 'string' },
  encrypt: { type: 'string' },
  'tasks-get-rate': { type: 'string' },
  'max-active-tasks': { type: 'string' },
  'max-stored-tasks': { type: 'string' },
  'max-active-tasks-per-tenant': { type: 'string' },
  'max-stored-tasks-per-tenant': { type: 'string' },
  'max-stored-bytes-per-principal': { type: 'string' },
  'max-steps-per-task': { type: 'string' },
  'max-step-bytes': { type: 'string' },
  'max-result-bytes': { type: 'string' },
  'max-stream-chunks-per-task': { type: 'string' },
  'max-stream-bytes-per-task': { type: 'string' },
  'no-audit': { type: 'boolean' },
  'log-level': { type: 'string' },
  'pg-schema': { type: 'string' },
  'pg-pool-size': { type: 'string' },
  'pg-statement-timeout-ms': { type: 'string' },
  'pg-no-prepared-statements': { type: 'boolean' },
  'no-metrics': { type: 'boolean' },
  'metrics-stats-interval-ms': { type: 'string' },
  'metrics-port': { type: 'string' },
  'metrics-host': { type: 'string' },
  'metrics-token': { type: 'string' },
  'metrics-allowed-hosts': { type: 'string' },
  otel: { type: 'boolean' },
} as const;

export type Flags = Record<string, string | boolean | undefined>;

/** What the HTTP endpoint and its node:http server are built with. */
export interface HttpSettings {
  host: string;
  port: number;
  extraHosts: string[];
  resourceUrl: string | undefined;
  /** Where clients and webhook senders reach this server (--public-url): the base of callback URLs. */
  publicUrl: string | undefined;
  keepAliveMs: number;
  maxBodyBytes: number;
  maxBufferedBytes: number;
  legacy: false | { maxSessionsPerPrincipal: number; resultWaitMs: number };
  limits: ListenHttpOptions;
  /** The operator API's task detail shows payloads (--admin-payloads). */
  adminPayloads: boolean;
  /** Open operator event streams: per operator credential, and in all (--max-admin-streams[-total]). */
  adminStreams: { perOperator: number; total: number };
}

/** /metrics: on the main port, or on a listener of its own; behind a bearer token or not. */
export interface MetricsSettings {
  statsIntervalMs: number;
  token: string | undefined;
  /**
   * A port of its own (then the main port answers 404 for /metrics), and the Host names it accepts besides loopback,
   * its bound name and IP addresses.
   */
  listen: { host: string; port: number; extraHosts: string[] } | undefined;
}

export interface ServeSettings {
  store: StoreFlags;
  tools: string;
  /** --tool-concurrency: the concurrency limit of tools served, by name. */
  toolConcurrency: Map<string, number>;
  stdio: boolean;
  logLevel: string;
  audit: boolean;
  otel: boolean;
  auth: AuthFlags;
  http: HttpSettings;
  metrics: MetricsSettings | false;
  runtime: RuntimeSettings;
  drainMs: number;
  graceMs: number;
}

const MIB = 1024 * 1024;

/** A comma list flag: its entries, trimmed, empty ones dropped. */
const listFlag = (value: string | boolean | undefined): string[] =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean)
    : [];

function stepDefaultsFromFlags(values: Flags): StepDefaults | undefined {
  const steps: StepDefaults = {};
  const attempts = values['step-max-attempts'];
  if (attempts !== undefined) {
    // `infinite` (or Infinity, as the library takes it): retried until it succeeds or the task's TTL ends.
    const n =
      typeof attempts === 'string' && /^(infinite|infinity)$/i.test(attempts) ? Infinity : Number(attempts);
    if (typeof attempts !== 'string' || !((Number.isInteger(n) && n >= 1) || n === Infinity))
      throw new UsageError('--step-max-attempts must be an integer of at least 1, or infinite');
    steps.retry = { maxAttempts: n };
  }
  if (values['step-timeout-ms'] !== undefined) {
    steps.timeoutMs = intFlag(values['step-timeout-ms'], 'step-timeout-ms', 0, 1);
  }
  return Object.keys(steps).length === 0 ? undefined : steps;
}

function fallbackFromFlags(values: Flags): FallbackOptions | false {
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

function storeFromFlags(values: Flags): StoreFlags {
  const optionalInt = (name: string, fallback: number): number | undefined =>
    values[name] === undefined ? undefined : intFlag(values[name], name, fallback);
  return {
    store: storeFrom(values.store) ?? './data/tasks.db',
    pgSchema: values['pg-schema'] as string | undefined,
    pgPoolSize: optionalInt('pg-pool-size', 10),
    pgStatementTimeoutMs: optionalInt('pg-statement-timeout-ms', 30_000),
    pgPreparedStatements: values['pg-no-prepared-statements'] !== true,
    migrate: values['no-migrate'] !== true,
    ...cipherFromFlags(values),
  };
}

/** An integer flag that may be large (a number of bytes), checked to be one JavaScript holds exactly. */
function safeInt(values: Flags, name: string, fallback: number, min: number): number {
  const n = intFlag(values[name], name, fallback, min);
  if (!Number.isSafeInteger(n)) throw new UsageError(`--${name} is too large`);
  return n;
}

/** What one task may store (--max-steps-per-task, …, --max-stream-bytes-per-task): whole numbers of at least 1. */
function limitsFromFlags(values: Flags): TaskLimits {
  const limit = (name: string, fallback: number): number => safeInt(values, name, fallback, 1);
  return {
    maxStepsPerTask: limit('max-steps-per-task', DEFAULT_TASK_LIMITS.maxStepsPerTask),
    maxStepBytes: limit('max-step-bytes', DEFAULT_TASK_LIMITS.maxStepBytes),
    maxResultBytes: limit('max-result-bytes', DEFAULT_TASK_LIMITS.maxResultBytes),
    maxStreamChunksPerTask: limit('max-stream-chunks-per-task', DEFAULT_TASK_LIMITS.maxStreamChunksPerTask),
    maxStreamBytesPerTask: limit('max-stream-bytes-per-task', DEFAULT_TASK_LIMITS.maxStreamBytesPerTask),
  };
}

function runtimeFromFlags(values: Flags): RuntimeSettings {
  const concurrency = intFlag(values.concurrency, 'concurrency', 8);
  const int = (name: string, fallback: number): number => intFlag(values[name], name, fallback);
  return {
    steps: stepDefaultsFromFlags(values),
    maxListensPerPrincipal: int('max-listens', 100),
    tasksGetRate: int('tasks-get-rate', 100),
    maxActiveTasksPerPrincipal: int('max-active-tasks', 1_000),
    maxStoredTasksPerPrincipal: int('max-stored-tasks', 10_000),
    maxActiveTasksPerTenant: int('max-active-tasks-per-tenant', 0),
    maxStoredTasksPerTenant: int('max-stored-tasks-per-tenant', 0),
    maxStoredBytesPerPrincipal: safeInt(
      values,
      'max-stored-bytes-per-principal',
      DEFAULT_MAX_STORED_BYTES_PER_PRINCIPAL,
      0,
    ),
    limits: limitsFromFlags(values),
    fallback: fallbackFromFlags(values),
    allowCallerPriority: values['allow-caller-priority'] === true,
    slotWaitMs: int('slot-wait-ms', 10_000),
    worker:
      concurrency === 0
        ? false
        : {
            concurrency,
            leaseMs: Math.max(300, int('lease-ms', 30_000)),
            removedToolDrainMs: int('removed-tool-drain-ms', 3_600_000),
          },
  };
}

function httpFromFlags(values: Flags): HttpSettings {
  const port = intFlag(values.port, 'port', 3000);
  if (port > 65535) throw new UsageError('--port must be at most 65535');
  const publicUrl = publicUrlFlag(values['public-url']);
  return {
    host: (values.host as string | undefined) ?? '127.0.0.1',
    port,
    extraHosts: [...listFlag(values['allowed-hosts']), ...publicHosts(publicUrl)],
    resourceUrl: values['resource-url'] as string | undefined,
    publicUrl,
    keepAliveMs: intFlag(values['keep-alive-ms'], 'keep-alive-ms', 15_000),
    maxBodyBytes: intFlag(values['max-body-mb'], 'max-body-mb', 4, 1) * MIB,
    maxBufferedBytes: intFlag(values['max-buffered-mb'], 'max-buffered-mb', 64, 1) * MIB,
    adminPayloads: values['admin-payloads'] === true,
    legacy:
      values['no-legacy'] === true
        ? false
        : {
            maxSessionsPerPrincipal: intFlag(values['max-sessions'], 'max-sessions', 1_000),
            // Shorter windows would have 2025-11-25 clients reconnect all the time.
            resultWaitMs: intFlag(values['legacy-result-wait-ms'], 'legacy-result-wait-ms', 60_000, 100),
          },
    adminStreams: {
      perOperator: intFlag(values['max-admin-streams'], 'max-admin-streams', 4, 1),
      total: intFlag(values['max-admin-streams-total'], 'max-admin-streams-total', 32, 1),
    },
    limits: connectionLimitsFromFlags(values),
  };
}

/** The limits of the node:http server (both ports). */
function connectionLimitsFromFlags(values: Flags): ListenHttpOptions {
  const perSource = intFlag(values['max-connections-per-source'], 'max-connections-per-source', 0);
  const proxies = listFlag(values['trust-proxy']);
  if (proxies.length > 0 && perSource === 0)
    throw new UsageError('--trust-proxy names the proxies of --max-connections-per-source: give both');
  const trusted = parseTrustedProxies(proxies);
  if (!trusted.ok) throw new UsageError(`--trust-proxy: ${trusted.reason}`);
  return {
    maxConnections: intFlag(values['max-connections'], 'max-connections', 1024, 1),
    maxConnectionsPerSource: perSource,
    trustProxy: proxies,
    requestTimeoutMs: intFlag(values['request-timeout-ms'], 'request-timeout-ms', 30_000, 100),
    headersTimeoutMs: intFlag(values['headers-timeout-ms'], 'headers-timeout-ms', 5_000, 100),
    // Above the 60 s that nginx and most balancers keep an idle upstream connection: they close it first.
    keepAliveTimeoutMs: intFlag(
      values['http-keep-alive-timeout-ms'],
      'http-keep-alive-timeout-ms',
      65_000,
      1,
    ),
  };
}

function metricsFromFlags(values: Flags, host: string): MetricsSettings | false {
  const token = (values['metrics-token'] as string | undefined) ?? process.env.DURABLE_MCP_METRICS_TOKEN;
  const port =
    values['metrics-port'] === undefined ? undefined : intFlag(values['metrics-port'], 'metrics-port', 0);
  if (values['no-metrics'] === true) {
    if (port !== undefined || values['metrics-token'] !== undefined)
      throw new UsageError('--metrics-port and --metrics-token serve metrics: drop --no-metrics');
    return false;
  }
  if (port !== undefined && port > 65535) throw new UsageError('--metrics-port must be at most 65535');
  if (port === undefined && values['metrics-host'] !== undefined)
    throw new UsageError('--metrics-host binds --metrics-port: give both');
  if (port === undefined && values['metrics-allowed-hosts'] !== undefined)
    throw new UsageError('--metrics-allowed-hosts names the hosts of --metrics-port: give both');
  if (token !== undefined && (token.length < 16 || /\s/.test(token)))
    throw new UsageError(
      '--metrics-token (or DURABLE_MCP_METRICS_TOKEN) must be at least 16 characters, without spaces',
    );
  return {
    statsIntervalMs: intFlag(
      values['metrics-stats-interval-ms'],
      'metrics-stats-interval-ms',
      DEFAULT_STATS_INTERVAL_MS,
    ),
    token,
    listen:
      port === undefined
        ? undefined
        : {
            host: (values['metrics-host'] as string | undefined) ?? host,
            port,
            extraHosts: listFlag(values['metrics-allowed-hosts']),
          },
  };
}

/** Every flag read and checked: usage errors first, before anything is opened. */
export function serveSettings(values: Flags): ServeSettings {
  const http = httpFromFlags(values);
  // Each read of payloads is an audit line: without audit lines nobody could tell who read what.
  if (http.adminPayloads && values['no-audit'] === true)
    throw new UsageError('--admin-payloads audits every read of payloads: drop --no-audit');
  return {
    store: storeFromFlags(values),
    tools: (values.tools as string | undefined) ?? 'demo',
    // A repeatable flag: parseArgs gives its values as a list.
    toolConcurrency: parseToolConcurrency([values['tool-concurrency'] ?? []].flat() as string[]),
    stdio: values.stdio === true,
    logLevel: (values['log-level'] as string | undefined) ?? 'info',
    audit: values['no-audit'] !== true,
    otel: values.otel === true,
    auth: authFlagsFrom(values),
    http,
    metrics: metricsFromFlags(values, http.host),
    runtime: runtimeFromFlags(values),
    drainMs: intFlag(values['drain-ms'], 'drain-ms', 0),
    graceMs: intFlag(values['shutdown-grace-ms'], 'shutdown-grace-ms', 10_000),
  };
}
