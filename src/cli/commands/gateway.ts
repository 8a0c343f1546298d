// `durable-mcp gateway --upstream …`: `serve`, with the tools of an existing MCP server (the upstream) instead of
// tool modules; every call of one can be a durable task whose one step is the upstream call (src/gateway/).
import { readFileSync } from 'node:fs';
import {
  DEFAULT_REFRESH_MS,
  followCatalog,
  upstreamConcurrencyKey,
  type CatalogSettings,
} from '../../gateway/catalog.js';
import { createUpstream } from '../../gateway/create-upstream.js';
import { tellUpstreamOfCancels } from '../../gateway/cancel-upstream.js';
import { createDispatchView } from '../../gateway/dispatch-state.js';
import { createUpstreamHealth } from '../../gateway/health.js';
import { describeTarget, upstreamLabel, type Upstream, type UpstreamTarget } from '../../gateway/upstream.js';
import { createUpstreamMetrics, type UpstreamRecorder } from '../../observability/upstream-metrics.js';
import { createLogger, type Logger } from '../../observability/logger.js';
import type { ToolSet } from '../../protocol/define.js';
import { MAX_CONCURRENCY_LIMIT } from '../../tasks/concurrency.js';
import { intFlag, parseFlags, UsageError } from '../args.js';
import { withToolConcurrency } from '../tool-concurrency.js';
import { loadToolSets } from '../tool-sets.js';
import { SERVE_FLAGS, serveSettings, type ServeSettings } from './serve-flags.js';
import { serveWith } from './serve.js';
import { serveUsage } from './serve-usage.js';
import { holdUntilRead, startingCatalog } from './gateway-start.js';
import {
  createUpstreamAuth,
  UPSTREAM_AUTH_FLAGS,
  upstreamAuthSetting,
  upstreamAuthUsage,
  type UpstreamAuthSetting,
} from '../upstream-auth.js';

const GATEWAY_FLAGS = {
  upstream: { type: 'string' },
  'tool-prefix': { type: 'string' },
  'task-tools': { type: 'string' },
  'sync-tools': { type: 'string' },
  'idempotent-tools': { type: 'string' },
  'upstream-retry': { type: 'string' },
  'upstream-timeout-ms': { type: 'string' },
  'upstream-connect-timeout-ms': { type: 'string' },
  'upstream-env': { type: 'string' },
  'upstream-token-env': { type: 'string' },
  'upstream-token-file': { type: 'string' },
  'upstream-refresh-ms': { type: 'string' },
  'upstream-pool': { type: 'string' },
  'upstream-session': { type: 'string' },
  'upstream-tenant-tokens': { type: 'string' },
  'upstream-concurrency': { type: 'string' },
  ...UPSTREAM_AUTH_FLAGS,
} as const;

export const gatewayUsage = `durable-mcp gateway --upstream <URL | stdio:COMMAND [ARGS…]> [gateway flags] [serve flags]
Serves an existing MCP server's tools (2025-11-25 or 2026-07-28, over Streamable HTTP or stdio) with the tasks
extension: every call of one can be a durable task whose one step is the upstream call (docs/gateway.md).
  --upstream SPEC        the server to front: its Streamable HTTP URL, or stdio: and the command that runs it
                         (words split at spaces; quote a word that holds one)
  --tool-prefix P        put P before every upstream tool's name (needed when one is named like a facade tool)
  --task-tools LIST      comma list of tool names (* any run of characters) that are only ever tasks
  --sync-tools LIST      tools that are never tasks (default: every tool an optional task)
  --idempotent-tools LIST  tools sent again after a gateway crash or a lost call (at least once), like those whose
                         annotations say idempotentHint or readOnlyHint; any other is sent at most once and ends
                         "outcome unknown" when the gateway cannot know whether the upstream did it
  --upstream-retry N     attempts of an idempotent tool's call in all (default 5; 1 s doubling to 30 s between)
  --upstream-timeout-ms N  how long a call may go without progress before it counts as lost (default 3600000)
  --upstream-connect-timeout-ms N  how long a call waits for the upstream to answer at all (default 30000); at start,
                         how long the gateway waits for its tool list before it serves without it, reading it again
  --upstream-refresh-ms N  how often the upstream's tool list is read again, besides its tools/list_changed
                         notifications (default 300000; 0: only on those)
  --upstream-pool N      child processes of a stdio upstream, each call sent to the one with the fewest calls out
                         (default 1; for a server that works on one request at a time)
  --upstream-session shared|per-principal  one session (or pool) for every caller (default), or a 2025-11-25 session
                         of its own per principal (for stdio, a child process of its own), for an upstream that keeps
                         state per session; at most 64 open, the least recently used idle one closed past that
  --upstream-env LIST    environment variables passed to a stdio upstream (it gets only PATH, HOME and the like
                         otherwise, never the gateway's own secrets)
  --upstream-token-env VAR | --upstream-token-file PATH  a bearer token for an HTTP upstream (never the caller's)
  --upstream-tenant-tokens FILE  a JSON object of bearer tokens for an HTTP upstream by tenant ({"acme": "…"}): a
                         tenant named there has its calls sent with its own token, any other with the token above
${upstreamAuthUsage}
  --upstream-concurrency N  at most N of the upstream's calls run as tasks at once, across every replica on the
                         store; more wait, working, for a free slot (synchronous calls are not counted)
  --tools LIST           tool modules of the gateway's own, served beside the upstream's (default none)
Every other flag is serve's:

${serveUsage.split('\n').slice(1).join('\n')}`;

/** Splits a command line at spaces; double or single quotes keep a word whole. */
export function splitCommand(line: string): string[] {
  const words: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const m of line.matchAll(pattern)) words.push(m[1] ?? m[2] ?? m[3] ?? '');
  return words;
}

const list = (value: string | boolean | undefined): string[] | undefined =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;

function tokenOf(values: Record<string, string | boolean | undefined>): string | undefined {
  const envName = values['upstream-token-env'];
  const file = values['upstream-token-file'];
  if (typeof envName === 'string' && typeof file === 'string')
    throw new UsageError('give --upstream-token-env or --upstream-token-file, not both');
  if (typeof envName === 'string') {
    const token = process.env[envName];
    if (token === undefined || token === '')
      throw new UsageError(`--upstream-token-env: ${envName} is not set`);
    return token;
  }
  if (typeof file === 'string') {
    try {
      return readFileSync(file, 'utf8').trim();
    } catch (err) {
      throw new UsageError(`--upstream-token-file: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return undefined;
}

/** The upstream's address and credentials from the flags; usage errors for what cannot be. */
export function upstreamTarget(values: Record<string, string | boolean | undefined>): UpstreamTarget {
  const spec = values.upstream;
  if (typeof spec !== 'string' || spec.trim() === '')
    throw new UsageError('--upstream is required: a Streamable HTTP URL, or stdio:COMMAND [ARGS…]');
  const token = tokenOf(values);
  if (spec.startsWith('stdio:')) {
    const [command, ...args] = splitCommand(spec.slice('stdio:'.length));
    if (command === undefined) throw new UsageError('--upstream stdio: names no command');
    if (token !== undefined)
      throw new UsageError('an upstream token is for an HTTP upstream, not a stdio one');
    const env: Record<string, string> = {};
    for (const name of list(values['upstream-env']) ?? []) {
      const value = process.env[name];
      if (value !== undefined) env[name] = value;
    }
    return { kind: 'stdio', command, args, env };
  }
  let url: URL;
  try {
    url = new URL(spec);
  } catch {
    throw new UsageError(`--upstream ${spec}: neither a URL nor stdio:COMMAND`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--upstream ${spec}: an http: or https: URL, or stdio:COMMAND`);
  if (url.username !== '' || url.password !== '')
    throw new UsageError('--upstream: give credentials with --upstream-token-env or -file, not in the URL');
  return {
    kind: 'http',
    url,
    headers: token === undefined ? undefined : { authorization: `Bearer ${token}` },
  };
}

/** The upstream's target with the sign-in the flags ask for (--upstream-client-id, --upstream-sign-in), if any. */
function signedInTarget(values: Record<string, string | boolean | undefined>): {
  target: UpstreamTarget;
  setting?: UpstreamAuthSetting;
} {
  const setting = upstreamAuthSetting(values);
  const target = upstreamTarget(values);
  if (setting === undefined || target.kind !== 'http') return { target };
  return { target: { ...target, auth: createUpstreamAuth(setting, target.url.href) }, setting };
}

/** --upstream-tenant-tokens: a JSON object of non-empty strings, read once at start. */
export function tenantTokensOf(file: string | boolean | undefined): Record<string, string> | undefined {
  if (typeof file !== 'string') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`--upstream-tenant-tokens: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new UsageError('--upstream-tenant-tokens: the file holds a JSON object of tokens by tenant');
  const tokens: Record<string, string> = {};
  for (const [tenant, token] of Object.entries(parsed)) {
    if (typeof token !== 'string' || token.trim() === '' || /\s/.test(token.trim()))
      throw new UsageError(
        `--upstream-tenant-tokens: the token of tenant ${JSON.stringify(tenant)} is not a token`,
      );
    tokens[tenant] = token.trim();
  }
  return tokens;
}

function catalogSettings(values: Record<string, string | boolean | undefined>): CatalogSettings {
  const prefix = values['tool-prefix'];
  if (typeof prefix === 'string' && !/^[A-Za-z0-9_.-]{0,64}$/.test(prefix))
    throw new UsageError('--tool-prefix: letters, digits, _ . - only, at most 64');
  return {
    prefix: typeof prefix === 'string' ? prefix : undefined,
    taskTools: list(values['task-tools']),
    syncTools: list(values['sync-tools']),
    idempotentTools: list(values['idempotent-tools']),
    retryAttempts: intFlag(values['upstream-retry'], 'upstream-retry', 5, 1),
  };
}

/** --upstream-concurrency: one concurrency key for every task of the upstream's tools. */
function upstreamCap(
  values: Record<string, string | boolean | undefined>,
  target: UpstreamTarget,
): Pick<CatalogSettings, 'concurrency'> {
  if (values['upstream-concurrency'] === undefined) return {};
  const limit = intFlag(values['upstream-concurrency'], 'upstream-concurrency', 1, 1);
  if (limit > MAX_CONCURRENCY_LIMIT)
    throw new UsageError(`--upstream-concurrency must be at most ${MAX_CONCURRENCY_LIMIT}`);
  const key = upstreamConcurrencyKey(upstreamLabel(target), describeTarget(target));
  return { concurrency: { limit, key } };
}

/** The facade tools' names under these settings, which no upstream tool may take. */
function facadeNames(settings: ServeSettings): string[] {
  const fallback = settings.runtime.fallback;
  if (fallback === false) return [];
  const prefix = fallback.toolPrefix ?? 'task_';
  return ['status', 'respond', 'cancel'].map((name) => `${prefix}${name}`);
}

function upstreamLog(logger: Logger) {
  return (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>): void => {
    logger[level](fields ?? {}, message);
  };
}

/** --upstream-pool and --upstream-session, checked. */
function sessionSettings(values: Record<string, string | boolean | undefined>): {
  poolSize: number;
  sessions: 'shared' | 'per-principal';
} {
  const poolSize = intFlag(values['upstream-pool'] as string | undefined, 'upstream-pool', 1, 1);
  if (poolSize > 64) throw new UsageError('--upstream-pool must be at most 64');
  const sessions = values['upstream-session'] ?? 'shared';
  if (sessions !== 'shared' && sessions !== 'per-principal')
    throw new UsageError('--upstream-session is shared or per-principal');
  if (sessions === 'per-principal' && values['upstream-pool'] !== undefined)
    throw new UsageError(
      '--upstream-pool is for shared sessions: with per-principal, each principal has one',
    );
  return { poolSize, sessions };
}

/** The gateway's own tools (--tools), under --tool-concurrency (the upstream's tools are limited upstream). */
const ownToolSets = async (settings: ServeSettings): Promise<ToolSet[]> =>
  withToolConcurrency(
    settings.tools === '' ? [] : await loadToolSets(settings.tools),
    settings.toolConcurrency,
  );

export async function gateway(argv: string[]): Promise<void> {
  const { values } = parseFlags(argv, { ...SERVE_FLAGS, ...GATEWAY_FLAGS });
  const { target, setting } = signedInTarget(values);
  const catalog = catalogSettings(values);
  const settings = serveSettings({ ...values, tools: values.tools ?? '' });
  const callTimeoutMs = intFlag(values['upstream-timeout-ms'], 'upstream-timeout-ms', 3_600_000, 1);
  const connectTimeoutMs = intFlag(
    values['upstream-connect-timeout-ms'],
    'upstream-connect-timeout-ms',
    30_000,
    1,
  );
  const refreshMs = intFlag(values['upstream-refresh-ms'], 'upstream-refresh-ms', DEFAULT_REFRESH_MS);
  const own = await ownToolSets(settings);
  const logger = createLogger(settings.logLevel);
  // Metrics exist once the store has opened: until then the upstream's reports are only remembered as its health.
  const recorder: { current?: UpstreamRecorder; up: boolean } = { up: false };
  const { poolSize, sessions } = sessionSettings(values);
  const tenantTokens = tenantTokensOf(values['upstream-tenant-tokens']);
  // The console's view of the upstream: its health, and where each of its tasks' calls stands.
  const health = createUpstreamHealth(describeTarget(target), upstreamLabel(target));
  if (tenantTokens !== undefined && target.kind !== 'http')
    throw new UsageError('--upstream-tenant-tokens is for an HTTP upstream, not a stdio one');
  const upstream: Upstream = createUpstream(target, {
    poolSize,
    sessions,
    tenantTokens,
    callTimeoutMs,
    connectTimeoutMs,
    log: upstreamLog(logger),
    observer: {
      call: (outcome, ms) => {
        health.observer.call(outcome, ms);
        recorder.current?.call(outcome, ms);
      },
      answering: (up) => {
        health.observer.answering(up);
        recorder.up = up;
        recorder.current?.answering(up);
      },
    },
  });
  const log = upstreamLog(logger);
  const settingsOfCatalog = { ...catalog, ...upstreamCap(values, target), reserved: facadeNames(settings) };
  const read = await startingCatalog(upstream, settingsOfCatalog, log, { setting, target }, logger);
  holdUntilRead(settings.runtime, read);
  const ownTools = new Set(own.flatMap((set) => (set.tools ?? []).map((tool) => tool.name)));
  const isUpstreamTool = (tool: string): boolean => !ownTools.has(tool);
  let stopTelling = (): void => undefined;
  let stopFollowing = (): void => undefined;
  await serveWith(settings, [{ tools: read.tools }, ...own], logger, {
    onServed: (runtime, metrics) => {
      if (metrics !== undefined) {
        recorder.current = createUpstreamMetrics(metrics.registry, upstreamLabel(target));
        recorder.current.answering(recorder.up);
      }
      stopFollowing = followCatalog(upstream, read.refresh, runtime.server.control, log, refreshMs, {
        readNow: !read.read,
      });
      stopTelling = tellUpstreamOfCancels({ store: runtime.store, upstream, isUpstreamTool, log });
    },
    onStopped: () => {
      stopFollowing();
      stopTelling();
      return upstream.close();
    },
    admin: {
      health: () => [health.component()],
      taskUpstream: createDispatchView(upstream.name, isUpstreamTool),
    },
  });
}
