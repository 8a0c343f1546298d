// The MCP server core: method table, envelope/header checks and dispatch, independent of any transport.
import { REMOVED_METHODS, type CoreMethod } from '../wire/methods.js';
import { traitsOf } from '../wire/method-traits.js';
import { randomBytes } from 'node:crypto';
import { checkVersionSupported, readEnvelope, type ClientCapabilities } from '../wire/envelope.js';
import { checkRoutingHeaders, checkVersionHeader, type HeaderLookup } from '../wire/headers.js';
import { memoizeSerialization, type IncomingRequest, type JsonObject } from '../wire/jsonrpc.js';
import { META_SERVER_INFO, SUPPORTED_PROTOCOL_VERSIONS } from '../wire/meta-keys.js';
import { methodNotFound, type ProtocolError } from '../wire/protocol-error.js';
import type { CacheHints } from './cache-hints.js';
import { complete } from './completion.js';
import type { AuthInfo, ServerControl } from './tool-types.js';
import type { StepDefaults, ToolDefinition, ToolSet } from './define.js';
import type { ToolErrorReport } from '../tasks/observer.js';
import { stepOptionsProblem } from '../tasks/execution.js';
import { resolveTaskLimits } from '../tasks/limits.js';
import { getPrompt, listPrompts } from './prompts.js';
import { Registry, type RegisteredTool } from './registry.js';
import { createLocalConsumeOnce, type ConsumeOnce } from './one-time.js';
import { createStateSealer } from './request-state.js';
import { listResources, listTemplates, readResource } from './resources.js';
import type { ResourceProvider } from './resource-provider.js';
import { advertises } from './advertised.js';
import { discoverResult } from './discover.js';
import { answered, handlerFailed, type DispatchOutcome } from './handler-outcome.js';
import type { RoundDeps } from './run-round.js';
import type { TakeStepSlot } from './inline-steps.js';
import { Scope, type MethodHandler, type RequestScope } from './scope.js';
import { listen, ListenSlots, type SubscriptionExtension } from './subscriptions.js';
import { callToolSync, listTools, resolveToolCall, type ToolCall } from './tools.js';

export interface ServerInfo {
  name: string;
  version: string;
  title?: string;
}

/** Lets an extension (the tasks extension) take over part of the protocol. */
export interface ServerExtension {
  id: string;
  /** Advertised under capabilities.extensions[id]. */
  capability: JsonObject;
  methods?: Record<string, MethodHandler>;
  /** Called for every tools/call after validation; returns a result to answer with, or undefined to run synchronously. */
  interceptToolCall?: (
    call: ToolCall,
    params: JsonObject,
    scope: RequestScope,
    deps: RoundDeps,
  ) => Promise<JsonObject | undefined>;
  subscriptions?: SubscriptionExtension[];
  /** Resources under URIs of the extension's own (the server then advertises the resources capability). */
  resources?: ResourceProvider;
  /** Tools the extension adds to the server's (the tasks extension's facade). */
  tools?: ToolDefinition<never>[];
  /** The tools/list a request sees, when the extension shapes it (the first extension with a view wins). */
  toolsView?: (scope: RequestScope) => ToolsView | undefined;
  close?: () => Promise<void>;
}

/** One way of listing the tools: its cache key, and the listings it shows of the registered tools, in order. */
export interface ToolsView {
  key: string;
  list(tools: RegisteredTool[]): JsonObject[];
}

export interface ServerOptions {
  info: ServerInfo;
  toolSets?: ToolSet[];
  instructions?: string;
  /** Secret sealing MRTR requestState; share it between replicas. Random per process when omitted. */
  stateSecret?: string | Buffer;
  /** Record of used one-time requestState (rounds of tools/call); share it between replicas. Default: this process. */
  consumeOnce?: ConsumeOnce;
  pageSize?: number;
  /** Open subscriptions/listen streams per principal (default 100); more are refused with 429. */
  maxListensPerPrincipal?: number;
  /** Cache freshness advertised on list, read and discover results. */
  listTtlMs?: number;
  discoverTtlMs?: number;
  extensions?: ServerExtension[];
  now?: () => number;
  /** Wraps every dispatch (after routing checks), e.g. in a tracing span; `meta`: its `params._meta`, unchecked. */
  wrapDispatch?: (
    method: string,
    run: () => Promise<DispatchOutcome>,
    meta: unknown,
  ) => Promise<DispatchOutcome>;
  /** Told when a subscriptions/listen stream opens (+1) and closes (-1). */
  onSubscription?: (delta: 1 | -1) => void;
  /**
   * The error for a tools/call of a name not served, instead of `Unknown tool` (-32602) when it gives one: e.g. a
   * gateway that has not read its upstream's tools yet, whose callers may try again.
   */
  unknownTool?: (name: string) => Error | undefined;
  /** Server-wide defaults of `ctx.step` (retry policy, timeout of each attempt), under each tool's own. */
  steps?: StepDefaults;
  /** The largest value a step without a task may return (bytes of JSON; default 4 MiB), as in a task. */
  maxStepBytes?: number;
  /** Told of every error a tool threw that became the isError result of a call without a task. */
  onToolError?: (report: ToolErrorReport) => void;
  /**
   * The slots of steps with a concurrency limit (StepOptions.concurrency) in calls without a task (the runtime gives
   * its store's); none: such steps run uncounted.
   */
  takeStepSlot?: TakeStepSlot;
}

export interface DispatchInput {
  request: IncomingRequest;
  auth: AuthInfo;
  signal: AbortSignal;
  header: HeaderLookup | undefined;
  emit(method: string, params: JsonObject): void;
  /** Back-pressure of the response stream (defaults to always writable). */
  whenWritable?: () => Promise<void>;
  /** Calls `fn` once when the client goes away (defaults to waiting on `signal`); returns the way to stop waiting. */
  onGone?: (fn: () => void) => () => void;
  /** Told once the request went to its handler: the input (a stream's lives on) need not keep its params. */
  handed?: () => void;
}

export type { DispatchOutcome };

export interface McpServer {
  readonly info: ServerInfo;
  /** Changes the server's lists at run time (tools, prompts, resources); open subscriptions are told. */
  readonly control: ServerControl;
  /** The definition of a registered tool. */
  toolDefinition(name: string): ToolDefinition<never> | undefined;
  /** Whether the server serves any resource or resource template. */
  servesResources(): boolean;
  dispatch(input: DispatchInput): Promise<DispatchOutcome>;
  /**
   * As `dispatch`, but the outcome itself when it is known at once (the checks refused the request, or its handler
   * answered synchronously): no promise to wait on. Optional: without it, `dispatch`.
   */
  dispatchNow?(input: DispatchInput): DispatchOutcome | Promise<DispatchOutcome>;
  /** Ends open subscriptions (they answer with their listen result) and closes extensions. */
  close(): Promise<void>;
}

/** The server core as `createMcpServer` builds it: the registry too, for the parts that assemble around it. */
export interface CoreServer extends McpServer {
  readonly registry: Registry;
}

const REMOVED: ReadonlySet<string> = new Set(REMOVED_METHODS);

/** Capability-gated methods (`capability` in the method traits) answer -32601 while it is not advertised. */
function isAvailable(table: MethodTable, method: string): boolean {
  const capability = traitsOf(method)?.capability;
  return capability === undefined || advertises(table.registry, capability, table.providers.length);
}

const providersOf = (extensions: readonly ServerExtension[]): ResourceProvider[] =>
  extensions.flatMap((e) => (e.resources === undefined ? [] : [e.resources]));
type ListBuilder = (kind: string, params: JsonObject, build: () => JsonObject) => JsonObject;

/** List results only change with the registry: build each page once, serialise it once. */
function listCache(registry: Registry, serverMeta: JsonObject): ListBuilder {
  const cache = new Map<string, JsonObject>();
  let cacheVersion = -1;
  return (kind, params, build) => {
    if (cacheVersion !== registry.version) {
      cache.clear();
      cacheVersion = registry.version;
    }
    const key = `${kind}\u0000${String(params.cursor)}`;
    let result = cache.get(key);
    if (result === undefined) {
      result = memoizeSerialization({ ...build(), _meta: serverMeta });
      cache.set(key, result);
    }
    return result;
  };
}

/** The first view of tools/list an extension shapes for this request, if any. */
function toolsViewOf(extensions: readonly ServerExtension[]): (scope: RequestScope) => ToolsView | undefined {
  const views = extensions.flatMap((e) => (e.toolsView ? [e.toolsView] : []));
  return (scope) => {
    for (const view of views) {
      const found = view(scope);
      if (found !== undefined) return found;
    }
    return undefined;
  };
}

/** What the method table is built from. */
interface Core {
  options: ServerOptions;
  registry: Registry;
  deps: RoundDeps;
  extensions: readonly ServerExtension[];
  serverMeta: JsonObject;
  shutdown: AbortSignal;
}

/** The core's methods, before the extensions add theirs. */
function coreMethods(core: Core): Record<CoreMethod, MethodHandler> {
  const { options, registry, deps, extensions } = core;
  const pageSize = options.pageSize ?? 100;
  const hints: CacheHints = { ttlMs: options.listTtlMs ?? 60_000, cacheScope: 'public' };
  const subscriptionExts = extensions.flatMap((e) => e.subscriptions ?? []);
  const providers = providersOf(extensions);
  const interceptors = extensions.flatMap((e) => (e.interceptToolCall ? [e.interceptToolCall] : []));
  const viewOf = toolsViewOf(extensions);
  const cachedList = listCache(registry, core.serverMeta);
  const listens = new ListenSlots(options.maxListensPerPrincipal ?? 100, options.onSubscription);
  return {
    'server/discover': discoverResult({
      registry,
      extensions,
      providers,
      instructions: options.instructions,
      ttlMs: options.discoverTtlMs ?? 300_000,
      serverMeta: core.serverMeta,
    }),
    'tools/list': (params, scope) => {
      const view = viewOf(scope);
      return cachedList(view === undefined ? 'tools' : `tools:${view.key}`, params, () =>
        listTools(registry, params, pageSize, hints, view),
      );
    },
    'tools/call': async (params, scope) => {
      const call = resolveToolCall(registry, params, scope, options.unknownTool);
      for (const intercept of interceptors) {
        const taken = await intercept(call, params, scope, deps);
        if (taken !== undefined) return taken;
      }
      return callToolSync(deps, call, params, scope);
    },
    'prompts/list': (params) =>
      cachedList('prompts', params, () => listPrompts(registry, params, pageSize, hints)),
    'prompts/get': (params, scope) => getPrompt(deps, registry, params, scope),
    'resources/list': (params) =>
      cachedList('resources', params, () => listResources(registry, params, pageSize, hints)),
    'resources/templates/list': (params) =>
      cachedList('templates', params, () => listTemplates(registry, params, pageSize, hints, providers)),
    'resources/read': (params, scope) => readResource(deps, registry, params, scope, hints, providers),
    'completion/complete': (params) => complete(registry, params),
    // Chained, not awaited: an open stream holds no suspended frame of this handler.
    'subscriptions/listen': (params, scope) =>
      listen(registry, subscriptionExts, core.shutdown, params, scope, providers, listens),
  };
}

/** What a dispatch looks requests up in (`providers`: the extensions' resource providers). */
interface MethodTable {
  registry: Registry;
  providers: readonly ResourceProvider[];
  methods: Record<string, MethodHandler>;
  serverMeta: JsonObject;
  /** A handler's result as the outcome (with the server's `_meta`): one function, not one per request. */
  answer: (result: JsonObject) => DispatchOutcome;
}

const fail = (error: ProtocolError): DispatchOutcome => ({ ok: false, error, origin: 'envelope' });

/** The outcome of one request: at once when the checks refuse it or its handler answers synchronously. */
function dispatchNow(table: MethodTable, input: DispatchInput): DispatchOutcome | Promise<DispatchOutcome> {
  const { request } = input;
  const { methods, serverMeta } = table;
  // Order matters (and is pinned by tests): routing headers, _meta presence, version header, version support,
  // method existence; capability gating and params errors come from the handlers.
  if (input.header !== undefined) {
    const mismatch = checkRoutingHeaders(input.header, request.method, request.params);
    if (mismatch !== undefined) return fail(mismatch);
  }
  const envelope = readEnvelope(request.params);
  if (!envelope.ok) return fail(envelope.error);
  const version = envelope.value.protocolVersion;
  if (input.header !== undefined) {
    const mismatch = checkVersionHeader(input.header, version);
    if (mismatch !== undefined) return fail(mismatch);
  }
  const unsupported = checkVersionSupported(version, SUPPORTED_PROTOCOL_VERSIONS);
  if (unsupported !== undefined) return fail(unsupported);
  const handler = Object.hasOwn(methods, request.method) ? methods[request.method] : undefined;
  if (handler === undefined || REMOVED.has(request.method) || !isAvailable(table, request.method)) {
    return fail(methodNotFound(request.method));
  }
  const scope = new Scope(request, envelope.value, input);
  let pending: Promise<JsonObject> | JsonObject;
  try {
    pending = handler(request.params as JsonObject, scope);
  } catch (err) {
    return handlerFailed(err);
  } finally {
    input.handed?.();
  }
  // Chained, not awaited: a long request (a stream) holds no suspended frame of the dispatch.
  if (!(pending instanceof Promise)) return answered(pending, serverMeta);
  return pending.then(table.answer, handlerFailed);
}

export function createMcpServer(options: ServerOptions): CoreServer {
  const problem = options.steps === undefined ? undefined : stepOptionsProblem(options.steps);
  if (problem !== undefined) throw new Error(`step defaults: ${problem}`);
  const extensions = options.extensions ?? [];
  const registry = new Registry([
    ...(options.toolSets ?? []),
    ...extensions.flatMap((e) => (e.tools === undefined ? [] : [{ tools: e.tools }])),
  ]);
  const deps: RoundDeps = {
    sealer: createStateSealer(options.stateSecret ?? randomBytes(32)),
    consumeOnce: options.consumeOnce ?? createLocalConsumeOnce(options.now ?? Date.now),
    now: options.now ?? Date.now,
    control: registry.control(),
    steps: options.steps,
    maxStepBytes: resolveTaskLimits({ maxStepBytes: options.maxStepBytes }).maxStepBytes,
    onToolError: options.onToolError,
    takeStepSlot: options.takeStepSlot,
  };
  const shutdown = new AbortController();
  const serverMeta = { [META_SERVER_INFO]: options.info };
  const methods = coreMethods({ options, registry, deps, extensions, serverMeta, shutdown: shutdown.signal });
  for (const ext of extensions) Object.assign(methods, ext.methods ?? {});
  const table: MethodTable = {
    registry,
    providers: providersOf(extensions),
    methods,
    serverMeta,
    answer: (result) => answered(result, serverMeta),
  };

  const wrap = options.wrapDispatch;
  // Not an async function: a long request (a stream) holds no promise of its own here.
  function dispatch(input: DispatchInput): Promise<DispatchOutcome> {
    try {
      if (wrap !== undefined)
        return wrap(
          input.request.method,
          () => Promise.resolve(dispatchNow(table, input)),
          input.request.params?._meta,
        );
      const outcome = dispatchNow(table, input);
      return outcome instanceof Promise ? outcome : Promise.resolve(outcome);
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }
  // With a wrapper, every dispatch goes through it (and its promise).
  const now = wrap === undefined ? (input: DispatchInput) => dispatchNow(table, input) : undefined;

  return {
    registry,
    info: options.info,
    control: registry.control(),
    toolDefinition: (name) => registry.tools.get(name)?.def,
    servesResources: () => registry.resources.size > 0 || registry.templates.size > 0,
    dispatch,
    dispatchNow: now,
    async close() {
      shutdown.abort();
      for (const ext of extensions) await ext.close?.();
    },
  };
}

export type { ClientCapabilities };
