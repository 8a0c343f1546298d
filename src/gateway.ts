// `durable-mcp/gateway`: put an existing MCP server (any language, either protocol era, stdio or Streamable HTTP)
// behind durable-mcp, so that its tool calls become durable tasks (docs/gateway.md).
import { createDurableMcp, type DurableMcp, type DurableMcpOptions } from './runtime.js';
import {
  followCatalog,
  readCatalog,
  upstreamConcurrencyKey,
  type CatalogSettings,
} from './gateway/catalog.js';
import { tellUpstreamOfCancels } from './gateway/cancel-upstream.js';
import { createUpstream } from './gateway/create-upstream.js';
import { concurrencyProblem } from './tasks/concurrency.js';
import {
  describeTarget,
  upstreamLabel,
  type Upstream,
  type UpstreamOptions,
  type UpstreamTarget,
} from './gateway/upstream.js';
export { createUpstream } from './gateway/create-upstream.js';
export {
  describeTarget,
  UpstreamLostError,
  UpstreamNotSentError,
  UpstreamRefusedError,
  UpstreamTaskLostError,
  type Upstream,
  type UpstreamAnswer,
  type UpstreamCallOptions,
  type UpstreamCallOutcome,
  type UpstreamFollowOptions,
  type UpstreamInputRequired,
  type UpstreamObserver,
  type UpstreamOptions,
  type UpstreamTarget,
  type UpstreamTaskCreated,
  type UpstreamTaskOutcome,
  type UpstreamTool,
} from './gateway/upstream.js';
export { type CatalogSettings } from './gateway/catalog.js';
export { createDispatchView, parseStepName } from './gateway/dispatch-state.js';
export { createUpstreamHealth, type UpstreamHealth } from './gateway/health.js';
export type {
  AdminDispatchState,
  AdminHealthComponent,
  AdminPayload,
  AdminTaskUpstream,
  AdminTaskUpstreamView,
} from './tasks/admin.js';
export { globMatcher } from './gateway/globs.js';
export { META_UPSTREAM_IDEMPOTENCY_KEY, outcomeUnknown, type DeliverySettings } from './gateway/delivery.js';

export interface GatewayOptions extends Omit<DurableMcpOptions, 'toolSets'> {
  /** The server in front of which the gateway stands: where it is, or a connection made with createUpstream. */
  upstream: UpstreamTarget | Upstream;
  /** How the upstream's tools are served: name prefix, which are tasks, which are sent again after a crash. */
  catalog?: CatalogSettings;
  /** Timeouts of the upstream connection, and where its log lines go (when `upstream` is a target). */
  connection?: UpstreamOptions;
  /** How often the upstream's tool list is read again besides its list changes (default five minutes; 0: never). */
  refreshMs?: number;
  /**
   * At most this many of the upstream's tool calls run as tasks at once, across every replica on the store (one
   * concurrency key per upstream, `upstream:<label>#<digest of its URL or command line>`); further tasks wait,
   * `working`, for a free slot, in turn between owners. Synchronous calls are not counted. Default: no cap.
   */
  upstreamConcurrency?: number;
  /** Tools, prompts and resources of the gateway's own, served beside the upstream's. */
  toolSets?: DurableMcpOptions['toolSets'];
}

export interface Gateway extends DurableMcp {
  readonly upstream: Upstream;
  /** Lists the upstream's tools again and serves the new and changed ones (done on its tools/list_changed). */
  refresh(): Promise<void>;
}

const isUpstream = (u: UpstreamTarget | Upstream): u is Upstream => 'callTool' in u;

/** The facade tools' names, which no upstream tool may take. */
function facadeNames(options: GatewayOptions): string[] {
  const fallback = options.tasks?.fallback;
  if (fallback === false) return [];
  const prefix = (typeof fallback === 'object' ? fallback.toolPrefix : undefined) ?? 'task_';
  return ['status', 'respond', 'cancel'].map((name) => `${prefix}${name}`);
}

/** The catalog's concurrency limit for `upstreamConcurrency` (none when unset); throws when it is not a count. */
function capOf(
  options: GatewayOptions,
  label: string,
  identity: string,
): Pick<CatalogSettings, 'concurrency'> {
  const limit = options.upstreamConcurrency;
  if (limit === undefined) return {};
  const problem = concurrencyProblem(limit, 'upstream');
  if (problem !== undefined) throw new Error(`upstreamConcurrency: ${problem}`);
  return { concurrency: { limit, key: upstreamConcurrencyKey(label, identity) } };
}

/** Connects to the upstream, reads its tools and builds the runtime; throws when the upstream cannot be read. */
export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const target = options.upstream;
  const cap = isUpstream(target)
    ? capOf(options, target.name, target.name)
    : capOf(options, upstreamLabel(target), describeTarget(target));
  const upstream = isUpstream(options.upstream)
    ? options.upstream
    : createUpstream(options.upstream, options.connection);
  const settings: CatalogSettings = {
    ...options.catalog,
    ...cap,
    reserved: facadeNames(options),
  };
  const log = options.connection?.log ?? (() => undefined);
  let catalog: Awaited<ReturnType<typeof readCatalog>>;
  try {
    catalog = await readCatalog(upstream, settings, log);
  } catch (err) {
    await upstream.close();
    throw err;
  }
  const {
    upstream: _upstream,
    catalog: _catalog,
    connection: _connection,
    refreshMs: _refreshMs,
    upstreamConcurrency: _upstreamConcurrency,
    toolSets = [],
    ...rest
  } = options;
  const runtime = createDurableMcp({ ...rest, toolSets: [{ tools: catalog.tools }, ...toolSets] });
  const ownTools = new Set(toolSets.flatMap((set) => (set.tools ?? []).map((tool) => tool.name)));
  const refresh = (): Promise<void> => catalog.refresh(runtime.server.control);
  const stopFollowing = followCatalog(
    upstream,
    catalog.refresh,
    runtime.server.control,
    log,
    options.refreshMs,
  );
  const stopTelling = tellUpstreamOfCancels({
    store: runtime.store,
    upstream,
    // Tools the upstream adds later are its too: only the gateway's own tool sets are not.
    isUpstreamTool: (tool) => !ownTools.has(tool),
    log,
  });

  return {
    ...runtime,
    server: runtime.server,
    worker: runtime.worker,
    store: runtime.store,
    listen: (listenOptions) => runtime.listen(listenOptions),
    upstream,
    refresh,
    async close(graceMs) {
      stopFollowing();
      stopTelling();
      await runtime.close(graceMs);
      await upstream.close();
    },
  };
}
