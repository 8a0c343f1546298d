// The MCP server core: method table, envelope/header checks and dispatch, independent of any transport.
import { randomBytes } from 'node:crypto';
import {
  checkVersionSupported,
  readEnvelope,
  type ClientCapabilities,
  type RequestEnvelope,
} from '../wire/envelope.js';
import { checkRoutingHeaders, checkVersionHeader, type HeaderLookup } from '../wire/headers.js';
import {
  memoizeSerialization,
  type IncomingRequest,
  type JsonObject,
  type RequestId,
} from '../wire/jsonrpc.js';
import { META_SERVER_INFO, SUPPORTED_PROTOCOL_VERSIONS } from '../wire/meta-keys.js';
import { methodNotFound, toProtocolError, type ProtocolError } from '../wire/protocol-error.js';
import type { ErrorOrigin } from '../wire/codes.js';
import type { CacheHints } from './cache-hints.js';
import { complete } from './completion.js';
import type { AuthInfo } from './context.js';
import type { StepDefaults, ToolDefinition, ToolSet } from './define.js';
import type { ToolErrorReport } from '../tasks/observer.js';
import { stepOptionsProblem } from '../tasks/execution.js';
import { getPrompt, listPrompts } from './prompts.js';
import { Registry, type RegisteredTool } from './registry.js';
import { createStateSealer } from './request-state.js';
import { listResources, listTemplates, readResource } from './resources.js';
import type { RoundDeps } from './run-round.js';
import type { MethodHandler, RequestScope } from './scope.js';
import { listen, type SubscriptionExtension } from './subscriptions.js';
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
  pageSize?: number;
  /** Cache freshness advertised on list, read and discover results. */
  listTtlMs?: number;
  discoverTtlMs?: number;
  extensions?: ServerExtension[];
  now?: () => number;
  /** Wraps every dispatch (after routing checks), e.g. in a tracing span. */
  wrapDispatch?: (method: string, run: () => Promise<DispatchOutcome>) => Promise<DispatchOutcome>;
  /** Told when a subscriptions/listen stream opens (+1) and closes (-1). */
  onSubscription?: (delta: 1 | -1) => void;
  /** Server-wide defaults of `ctx.step` (retry policy, timeout of each attempt), under each tool's own. */
  steps?: StepDefaults;
  /** Told of every error a tool threw that became the isError result of a call without a task. */
  onToolError?: (report: ToolErrorReport) => void;
}

export interface DispatchInput {
  request: IncomingRequest;
  auth: AuthInfo;
  signal: AbortSignal;
  header: HeaderLookup | undefined;
  emit(method: string, params: JsonObject): void;
  /** Back-pressure of the response stream (defaults to always writable). */
  whenWritable?: () => Promise<void>;
}

export type DispatchOutcome =
  { ok: true; result: JsonObject } | { ok: false; error: ProtocolError; origin: ErrorOrigin };

export interface McpServer {
  readonly registry: Registry;
  readonly info: ServerInfo;
  dispatch(input: DispatchInput): Promise<DispatchOutcome>;
  /** Ends open subscriptions (they answer with their listen result) and closes extensions. */
  close(): Promise<void>;
}

/**
 * What a method handler sees of its request. A class rather than an object literal: a literal with a getter gets
 * a hidden class of its own on every request, allocated where only full collections free it.
 */
class Scope implements RequestScope {
  readonly id: RequestId;
  readonly method: string;
  readonly auth: AuthInfo;
  readonly header: HeaderLookup | undefined;

  constructor(
    request: IncomingRequest,
    readonly envelope: RequestEnvelope,
    private readonly input: DispatchInput,
  ) {
    this.id = request.id;
    this.method = request.method;
    this.auth = input.auth;
    this.header = input.header;
  }

  get signal(): AbortSignal {
    return this.input.signal;
  }

  emit(method: string, params: JsonObject): void {
    this.input.emit(method, params);
  }

  whenWritable(): Promise<void> {
    return this.input.whenWritable === undefined ? Promise.resolve() : this.input.whenWritable();
  }
}

const REMOVED = new Set([
  'initialize',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
]);

export function createMcpServer(options: ServerOptions): McpServer {
  const problem = options.steps === undefined ? undefined : stepOptionsProblem(options.steps);
  if (problem !== undefined) throw new Error(`step defaults: ${problem}`);
  const extensions = options.extensions ?? [];
  const registry = new Registry([
    ...(options.toolSets ?? []),
    ...extensions.flatMap((e) => (e.tools === undefined ? [] : [{ tools: e.tools }])),
  ]);
  const now = options.now ?? Date.now;
  const deps: RoundDeps = {
    sealer: createStateSealer(options.stateSecret ?? randomBytes(32)),
    now,
    control: registry.control(),
    steps: options.steps,
    onToolError: options.onToolError,
  };
  const pageSize = options.pageSize ?? 100;
  const hints: CacheHints = { ttlMs: options.listTtlMs ?? 60_000, cacheScope: 'public' };
  const shutdown = new AbortController();
  const serverMeta = { [META_SERVER_INFO]: options.info };
  const subscriptionExts = extensions.flatMap((e) => e.subscriptions ?? []);
  const interceptors = extensions.flatMap((e) => (e.interceptToolCall ? [e.interceptToolCall] : []));
  const views = extensions.flatMap((e) => (e.toolsView ? [e.toolsView] : []));
  const viewOf = (scope: RequestScope): ToolsView | undefined => {
    for (const view of views) {
      const found = view(scope);
      if (found !== undefined) return found;
    }
    return undefined;
  };

  const capabilities = (): JsonObject => {
    const caps: JsonObject = { tools: { listChanged: true } };
    if (registry.prompts.size > 0) caps.prompts = { listChanged: true };
    if (registry.resources.size > 0 || registry.templates.size > 0) {
      caps.resources = { subscribe: true, listChanged: true };
    }
    if (hasCompletions()) caps.completions = {};
    if (extensions.length > 0)
      caps.extensions = Object.fromEntries(extensions.map((e) => [e.id, e.capability]));
    return caps;
  };
  const hasCompletions = (): boolean =>
    [...registry.prompts.values()].some((p) => p.complete !== undefined) ||
    [...registry.templates.values()].some((t) => t.complete !== undefined);

  // List results only change with the registry: build each page once, serialise it once.
  const listCache = new Map<string, JsonObject>();
  let listCacheVersion = -1;
  const cachedList = (kind: string, params: JsonObject, build: () => JsonObject): JsonObject => {
    if (listCacheVersion !== registry.version) {
      listCache.clear();
      listCacheVersion = registry.version;
    }
    const key = `${kind}\u0000${String(params.cursor)}`;
    let result = listCache.get(key);
    if (result === undefined) {
      result = memoizeSerialization({ ...build(), _meta: serverMeta });
      listCache.set(key, result);
    }
    return result;
  };

  const methods: Record<string, MethodHandler> = {
    'server/discover': () => {
      const result: JsonObject = {
        resultType: 'complete',
        supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
        capabilities: capabilities(),
        ttlMs: options.discoverTtlMs ?? 300_000,
        cacheScope: 'public',
      };
      if (options.instructions !== undefined) result.instructions = options.instructions;
      return result;
    },
    'tools/list': (params, scope) => {
      const view = viewOf(scope);
      return cachedList(view === undefined ? 'tools' : `tools:${view.key}`, params, () =>
        listTools(registry, params, pageSize, hints, view),
      );
    },
    'tools/call': async (params, scope) => {
      const call = resolveToolCall(registry, params, scope);
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
      cachedList('templates', params, () => listTemplates(registry, params, pageSize, hints)),
    'resources/read': (params, scope) => readResource(deps, registry, params, scope, hints),
    'completion/complete': (params) => complete(registry, params),
    'subscriptions/listen': async (params, scope) => {
      options.onSubscription?.(1);
      try {
        return await listen(registry, subscriptionExts, shutdown.signal, params, scope);
      } finally {
        options.onSubscription?.(-1);
      }
    },
  };
  for (const ext of extensions) Object.assign(methods, ext.methods ?? {});

  /** Capability-gated methods answer -32601 while their capability is not advertised. */
  const available = (method: string): boolean => {
    if (method.startsWith('prompts/')) return registry.prompts.size > 0;
    if (method.startsWith('resources/')) return registry.resources.size > 0 || registry.templates.size > 0;
    if (method === 'completion/complete') return hasCompletions();
    return true;
  };

  const wrap = options.wrapDispatch;
  async function dispatch(input: DispatchInput): Promise<DispatchOutcome> {
    return wrap === undefined ? dispatchNow(input) : wrap(input.request.method, () => dispatchNow(input));
  }

  async function dispatchNow(input: DispatchInput): Promise<DispatchOutcome> {
    const { request } = input;
    // Order matters (and is pinned by tests): routing headers, _meta presence, version header, version support,
    // method existence; capability gating and params errors come from the handlers.
    const fail = (error: ProtocolError): DispatchOutcome => ({ ok: false, error, origin: 'envelope' });
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
    if (handler === undefined || REMOVED.has(request.method) || !available(request.method)) {
      return fail(methodNotFound(request.method));
    }
    const scope = new Scope(request, envelope.value, input);
    try {
      const result = await handler(request.params as JsonObject, scope);
      const meta = result._meta as JsonObject | undefined;
      if (meta === undefined) result._meta = serverMeta;
      else if (meta[META_SERVER_INFO] === undefined) result._meta = { ...serverMeta, ...meta };
      return { ok: true, result };
    } catch (err) {
      return { ok: false, error: toProtocolError(err), origin: 'handler' };
    }
  }

  return {
    registry,
    info: options.info,
    dispatch,
    async close() {
      shutdown.abort();
      for (const ext of extensions) await ext.close?.();
    },
  };
}

export type { ClientCapabilities };
