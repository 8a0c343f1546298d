// `durable-mcp serve`: the HTTP (or stdio) server on the configured store and tool sets. When the store does not
// answer at start, the port still opens (liveness 200, readiness and every request 503) while the store is tried
// again; the server is built and swapped in once it opens.
import { openBackend } from '../store-config.js';
import { createLogger, type Logger } from '../../observability/logger.js';
import { buildAuth, type AuthSetup } from '../auth-config.js';
import type { HttpHandler } from '../../transport/http/handler.js';
import { listenHttp, type RunningHttpServer } from '../../transport/http/node-server.js';
import { createUnavailableHandler } from '../../transport/http/unavailable.js';
import { serveStdio } from '../../transport/stdio/stdio.js';
import { urlHost } from '../../runtime.js';
import type { Backend } from '../../tasks/backend.js';
import type { DurableMcp } from '../../runtime.js';
import type { Metrics } from '../../observability/metrics.js';
import { newerSchemaWarning } from '../../stores/schema-fit.js';
import type { ToolSet } from '../../protocol/define.js';
import { parseFlags } from '../args.js';
import { VERSION } from '../../version.js';
import { printErr, printOut } from '../terminal-text.js';
import { withToolConcurrency } from '../tool-concurrency.js';
import { loadToolSets } from '../tool-sets.js';
import { SERVE_FLAGS, serveSettings, type ServeSettings } from './serve-flags.js';
import { mainOrigin, metricsOrigin } from './serve-helpers.js';
import { listenMetrics } from './serve-metrics.js';
import { runtimeOn, serveOn, type AdminExtras, type Served } from './serve-runtime.js';
import { isUnreachable, retryOpening, type StoreOpening } from './serve-store.js';

export { serveUsage } from './serve-usage.js';

/** What a request gets while the store has not answered yet. */
const STARTING = { reason: 'store unreachable', message: 'Server starting: its store does not answer yet' };

const storeError = (err: unknown): Error =>
  new Error(`--store: ${err instanceof Error ? err.message : String(err)}`);

/** One attempt: the backend, or the error of a store that does not answer; a refused set-up throws. */
async function openOnce(settings: ServeSettings): Promise<{ backend: Backend } | { unreachable: unknown }> {
  try {
    return { backend: await openBackend(settings.store) };
  } catch (err) {
    if (isUnreachable(err)) return { unreachable: err };
    throw storeError(err);
  }
}

function announce(logger: Logger, auth: AuthSetup, settings: ServeSettings): void {
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
  const { cipher, encrypt } = settings.store;
  if (cipher !== undefined) logger.info({ encrypt, keyId: cipher.currentKeyId }, 'encryption at rest');
}

async function serveOnStdio(
  settings: ServeSettings,
  toolSets: ToolSet[],
  logger: Logger,
  hooks: ServeHooks,
): Promise<void> {
  const first = await openOnce(settings);
  // No port to answer on while the store does not: it ends the process at once.
  if (!('backend' in first)) throw storeError(first.unreachable);
  const runtime = runtimeOn(settings, first.backend, toolSets, logger);
  hooks.onServed?.(runtime, undefined);
  await serveStdio({
    server: runtime.server,
    input: process.stdin,
    output: process.stdout,
    graceMs: settings.graceMs,
  });
  await runtime.close(settings.graceMs);
  await hooks.onStopped?.();
}

/**
 * The listeners of a process: the MCP port and a metrics port. The MCP port's handler is replaced once, when the
 * store opens, by one built complete on it (never reconfigured in place).
 */
interface Listening {
  readonly main: RunningHttpServer;
  readonly metrics: RunningHttpServer | undefined;
  readonly auth: AuthSetup;
  /** Serves the MCP port with `handler` from the next request on. */
  use(handler: HttpHandler): void;
  close(graceMs: number): Promise<void>;
}

/** Binds the ports; the MCP port answers as a starting server until `use` gives it the real handler. */
async function listen(
  settings: ServeSettings,
  served: () => Served | undefined,
  readiness: () => Promise<string | undefined>,
  logger: Logger,
): Promise<Listening> {
  const { http } = settings;
  let current: HttpHandler = createUnavailableHandler({ ...STARTING, origin: mainOrigin(http, logger) });
  let auth: AuthSetup | undefined;
  const main = await listenHttp(
    {
      // Credentials are set up (and checked) once the port is known, before the store: they do not need it.
      build: (at) => {
        auth = buildAuth(settings.auth, http.resourceUrl ?? `http://${urlHost(http.host)}:${at.port}/mcp`);
        return (req, res) => current(req, res);
      },
    },
    http.host,
    http.port,
    '/mcp',
    http.limits,
  );
  let metrics: RunningHttpServer | undefined;
  const at = settings.metrics === false ? undefined : settings.metrics.listen;
  if (at !== undefined) {
    try {
      metrics = await listenMetrics(at, http.limits, {
        metrics: () => served()?.metrics,
        readiness,
        origin: metricsOrigin(at, logger),
      });
    } catch (err) {
      await main.close(0);
      throw err;
    }
  }
  return {
    main,
    metrics,
    auth: auth as AuthSetup,
    use: (handler) => (current = handler),
    close: async (graceMs) => {
      await Promise.all([main.close(graceMs), metrics?.close(graceMs)]);
    },
  };
}

/** The process's state: starting (no store yet), serving, or stopping (draining first when serving). */
interface State {
  served: Served | undefined;
  opening: StoreOpening | undefined;
  draining: boolean;
  stopping: boolean;
}

function serving(logger: Logger, backend: Backend): void {
  // Which release, on which store (password hidden) and schema, at which migration (applied or checked).
  const { description: store, schema, migration } = backend;
  logger.info({ version: VERSION, store, schema, migration }, 'serving');
  const newer = backend.newerMigrations ?? [];
  const warning = newerSchemaWarning(newer);
  if (warning !== undefined) logger.warn({ version: VERSION, newerMigrations: newer }, warning);
}

/** Stops on SIGTERM/SIGINT: a starting process at once; a serving one after its drain and grace. */
function stopper(
  settings: ServeSettings,
  state: State,
  listening: Listening,
  logger: Logger,
  hooks: ServeHooks,
) {
  return async (signal: string): Promise<void> => {
    if (state.stopping) return;
    state.stopping = true;
    // Not ready at once; still serving while the balancer notices, then closing with a grace for what is in flight.
    state.draining = true;
    const served = state.served;
    if (served === undefined) {
      logger.info(`${signal}: stopping; the store never answered`);
      await state.opening?.stop();
      await listening.close(0);
      logger.flush(() => process.exit(0));
      return;
    }
    const { drainMs, graceMs } = settings;
    logger.info({ drainMs, graceMs }, `${signal}: not ready; shutting down`);
    if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
    const closing = listening.close(graceMs);
    await served.runtime.server.close();
    await closing;
    await served.runtime.close(graceMs);
    await hooks.onStopped?.();
    logger.flush(() => process.exit(0));
  };
}

/**
 * A store that answered with a refusal once the port was open (or a server that could not be built on it): the same
 * message and exit code as at start, after closing the ports.
 */
async function failed(failure: Error, listening: Listening, logger: Logger): Promise<void> {
  logger.error({ err: failure }, 'cannot serve; stopping');
  printErr(`durable-mcp: ${failure.message}`);
  await listening.close(0);
  logger.flush(() => process.exit(1));
}

/** Builds the server once the store opens (unless stopping by then), or exits when it cannot be. */
async function upWhenOpened(
  opening: StoreOpening,
  state: State,
  up: (backend: Backend) => void,
  listening: Listening,
  logger: Logger,
): Promise<void> {
  let backend: Backend | undefined;
  try {
    backend = await opening.opened;
  } catch (err) {
    return failed(storeError(err), listening, logger);
  }
  if (backend === undefined) return;
  if (state.stopping) return backend.close();
  try {
    up(backend);
  } catch (err) {
    return failed(err instanceof Error ? err : new Error(String(err)), listening, logger);
  }
}

export async function serve(argv: string[]): Promise<void> {
  const { values } = parseFlags(argv, SERVE_FLAGS);
  // Usage errors first, before anything is opened.
  const settings = serveSettings(values);
  const toolSets = withToolConcurrency(await loadToolSets(settings.tools), settings.toolConcurrency);
  const logger = createLogger(settings.logLevel);
  return serveWith(settings, toolSets, logger);
}

/** What a command built on `serve` (the gateway) adds: told of each runtime it serves, and of the stop. */
export interface ServeHooks {
  onServed?: (runtime: DurableMcp, metrics: Metrics | undefined) => void;
  onStopped?: () => Promise<void>;
  /** Given to the operator API of every runtime served (AdminApiOptions). */
  admin?: AdminExtras;
}

/** Serves `toolSets` as `serve` does, on stdio or HTTP, with the settings of its flags. */
export async function serveWith(
  settings: ServeSettings,
  toolSets: ToolSet[],
  logger: Logger,
  hooks: ServeHooks = {},
): Promise<void> {
  if (settings.stdio) return serveOnStdio(settings, toolSets, logger, hooks);

  const first = await openOnce(settings);
  const state: State = { served: undefined, opening: undefined, draining: false, stopping: false };
  const readiness = async (): Promise<string | undefined> =>
    state.draining ? 'draining' : (state.served?.storeAnswers() ?? STARTING.reason);
  let listening: Listening;
  try {
    listening = await listen(settings, () => state.served, readiness, logger);
  } catch (err) {
    if ('backend' in first) await first.backend.close();
    throw err;
  }
  const up = (backend: Backend): void => {
    try {
      state.served = serveOn(settings, backend, toolSets, logger, listening.auth, readiness, hooks.admin);
    } catch (err) {
      void backend.close();
      throw err;
    }
    hooks.onServed?.(state.served.runtime, state.served.metrics);
    listening.use(state.served.handler);
    serving(logger, backend);
  };
  // Last resort: an error no request, run or stream caught is logged, and the server goes on serving the others.
  process.on('uncaughtException', (err) => logger.error({ err }, 'uncaught error; still serving'));
  process.on('unhandledRejection', (err) => logger.error({ err }, 'unhandled rejection; still serving'));
  announce(logger, listening.auth, settings);
  if ('backend' in first) {
    try {
      up(first.backend);
    } catch (err) {
      await listening.close(0);
      throw err;
    }
  } else {
    state.opening = retryOpening(() => openBackend(settings.store), first.unreachable, logger);
    void upWhenOpened(state.opening, state, up, listening, logger);
  }
  const stop = stopper(settings, state, listening, logger, hooks);
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  if (listening.metrics !== undefined) printOut(`metrics on ${listening.metrics.url}`);
  // Printed last: once a caller sees it, signals are handled (and the port answers, ready or starting).
  printOut(`listening on http://${urlHost(settings.http.host)}:${listening.main.port}/mcp`);
}
