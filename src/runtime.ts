// Wires a server, the tasks extension and a worker around one backend: the usual way to embed durable-mcp.
import { randomBytes } from 'node:crypto';
import type { Authenticator } from './auth/authenticator.js';
import { createCallbackTokens, type CallbackTokens } from './tasks/callback-tokens.js';
import type { TaskEventOptions } from './protocol/tasks/task-context.js';
import { createAnonymousAuthenticator } from './auth/authenticator.js';
import type { Backend } from './tasks/backend.js';
import type { SessionStore } from './tasks/sessions.js';
import { createHttpHandler, type HttpHandlerOptions } from './http.js';
import { listenHttp, type ListenHttpOptions, type RunningHttpServer } from './transport/http/node-server.js';
import { LOOPBACK_HOSTS } from './transport/http/origin-check.js';
import {
  createMcpServer,
  type CoreServer,
  type McpServer,
  type ServerInfo,
  type ServerOptions,
} from './protocol/server.js';
import type { StepDefaults, ToolSet } from './protocol/define.js';
import type { Clock } from './tasks/clock.js';
import type { ToolErrorReport } from './tasks/observer.js';
import {
  createTasksExtension,
  taskDefaultsOf,
  type TasksExtensionOptions,
} from './protocol/tasks/extension.js';
import { childStarter } from './protocol/tasks/child-tasks.js';
import { claimScopeOf, createTaskRunner } from './protocol/tasks/runner.js';
import { callSlotDeps, callStepSlots } from './protocol/tasks/call-slots.js';
import type { TaskStore } from './tasks/store.js';
import { VERSION } from './version.js';
import { createWorker, type Worker, type WorkerOptions } from './worker/worker.js';
import { combineObservers } from './tasks/observer.js';
import { activeTraceContext, createTracingObserver, traced } from './observability/tracing.js';
import { resolveTaskLimits, type TaskLimits } from './tasks/limits.js';

export interface DurableMcpOptions {
  toolSets: ToolSet[];
  /** Where tasks live: `createSqliteBackend()`, or `await createPostgresBackend()` for several replicas. */
  backend?: Backend;
  /** A bare task store instead of a backend. */
  store?: TaskStore;
  /** With a bare store: where legacy (2025-11-25) sessions live (default: in this process only). */
  sessions?: SessionStore;
  info?: ServerInfo;
  instructions?: string;
  /** Seals MRTR requestState; give every replica the same secret (default: the backend's stored one). */
  stateSecret?: string | Buffer;
  /**
   * The URL clients and webhook senders reach this server at (e.g. `https://mcp.example.com`): `ctx.callbackUrl`
   * makes `<publicUrl>/callbacks/<token>` URLs, signed with `stateSecret` (the same on every replica), and `listen`
   * accepts its host name. Without it `ctx.callbackUrl` throws.
   */
  publicUrl?: string;
  tasks?: Omit<TasksExtensionOptions, 'store' | 'now'>;
  /** Worker settings, or false for a process that serves requests but runs no tasks. */
  worker?:
    | (Omit<WorkerOptions, 'store' | 'runner' | 'now' | 'clock' | 'scope'> & {
        /**
         * Tasks of a tool no longer registered here are left for other processes (a rolling deploy) this long after
         * their last change, then failed with a clear message (default one hour).
         */
        removedToolDrainMs?: number;
        /**
         * While this answers true, tasks of tools not registered here are left alone however long untouched, never
         * failed as removed (a gateway that has not read its upstream's tool list yet). Default: never.
         */
        holdUnservedTasks?: () => boolean;
      })
    | false;
  now?: () => number;
  /** Time and timers of the runtime (replaces `now`): step timeouts, waits and the tasks' timestamps. */
  clock?: Clock;
  /** Defaults of every tool's `ctx.step` (retry policy, timeout of each attempt), under the tool's own. */
  steps?: StepDefaults;
  /**
   * Bounds on what one task may store (each default in DEFAULT_TASK_LIMITS): records (steps, sleeps, patch decisions)
   * per task, bytes of a step's value, bytes of a result, input request or status message.
   */
  limits?: Partial<TaskLimits>;
  /** Told once of every error a tool threw: kept with its task, or answered as an isError result. */
  onToolError?: (report: ToolErrorReport) => void;
  /**
   * OpenTelemetry spans through `@opentelemetry/api` (they go nowhere until an SDK is registered): one per request, a
   * child of the caller's `_meta.traceparent` when it sent a valid one; one per task run, step attempt and wait, in
   * the trace of the tools/call that created the task, on whichever replica runs it (docs/operations.md "Tracing").
   */
  tracing?: boolean;
  /** Extra server settings (dispatch wrapper, subscription counting, paging, cache hints). */
  server?: Pick<
    ServerOptions,
    | 'wrapDispatch'
    | 'onSubscription'
    | 'pageSize'
    | 'listTtlMs'
    | 'discoverTtlMs'
    | 'maxListensPerPrincipal'
    | 'unknownTool'
  >;
}

export interface ListenOptions {
  /** TCP port (default 3000; 0 picks a free one). */
  port?: number;
  /** Interface to bind (default 127.0.0.1). */
  host?: string;
  /** Who the caller is (default: everyone is the same anonymous principal, for development). */
  authenticator?: Authenticator;
  /**
   * Host names accepted in `Host` and `Origin` besides loopback and the bound host (DNS-rebinding protection):
   * the names clients and proxies use to reach this server.
   */
  allowedHosts?: readonly string[];
  /** Everything else the HTTP handler takes (path, body limit, keep-alives, metrics routes, audit …). */
  http?: Omit<HttpHandlerOptions, 'server' | 'authenticator' | 'origin'>;
  /**
   * Limits of the node:http server, as `serve`'s flags set them: open connections (`--max-connections`) and per client
   * address (`--max-connections-per-source`, `--trust-proxy`), time to receive a request head and a whole request
   * (`--headers-timeout-ms`, `--request-timeout-ms`), idle keep-alive time (`--http-keep-alive-timeout-ms`).
   */
  limits?: ListenHttpOptions;
}

export interface DurableMcp {
  readonly server: McpServer;
  readonly worker: Worker | undefined;
  readonly store: TaskStore;
  /** The tokens of this server's callback URLs (ctx.callbackUrl), for an HTTP handler built by hand (`events`). */
  readonly callbackTokens: CallbackTokens;
  /** Serves the tools over Streamable HTTP at `http://host:port/mcp`; `close()` of the result stops listening. */
  listen(options?: ListenOptions): Promise<RunningHttpServer>;
  /** Ends subscriptions, stops the worker (waiting up to graceMs for runs), closes the backend or store. */
  close(graceMs?: number): Promise<void>;
}

/** A host as it appears in a URL and a Host header: IPv6 addresses in brackets. */
export const urlHost = (host: string): string =>
  host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;

/** Allowed Host names for a server bound to `host`: loopback, the bound name, and the extra ones given. */
export function allowedHostsFor(host: string, extra: readonly string[] = []): string[] {
  const bound = urlHost(host);
  const hosts = [...LOOPBACK_HOSTS, ...extra.map((h) => h.trim().toLowerCase()).filter(Boolean)];
  if (!['0.0.0.0', '[::]'].includes(bound)) hosts.push(bound.toLowerCase());
  return hosts;
}

/** The public URL checked: an absolute http(s) URL without query or fragment, kept without a trailing slash. */
export function checkedPublicUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`publicUrl: not a URL: ${JSON.stringify(url.slice(0, 200))}`);
  }
  if (!['http:', 'https:'].includes(parsed.protocol) || parsed.search !== '' || parsed.hash !== '')
    throw new TypeError('publicUrl: an http(s) URL without query or fragment, e.g. https://mcp.example.com');
  return parsed.href.replace(/\/+$/, '');
}

/** The worker of `createDurableMcp`, unless `options.worker` is false. */
function workerFor(
  options: DurableMcpOptions,
  store: TaskStore,
  server: CoreServer,
  limits: TaskLimits,
  now: (() => number) | undefined,
  events: TaskEventOptions,
): Worker | undefined {
  if (options.worker === false) return undefined;
  const onToolError = options.onToolError;
  return createWorker({
    maxStepsPerTask: limits.maxStepsPerTask,
    maxStepBytes: limits.maxStepBytes,
    maxStreamChunksPerTask: limits.maxStreamChunksPerTask,
    maxStreamBytesPerTask: limits.maxStreamBytesPerTask,
    // The quota the tasks extension applies to creations, applied to step values.
    maxStoredBytesPerPrincipal: options.tasks?.maxStoredBytesPerPrincipal,
    ...options.worker,
    store,
    now,
    clock: options.clock,
    runner: createTaskRunner(server.registry, server.info, {
      steps: options.steps,
      maxResultBytes: limits.maxResultBytes,
      // ctx.callTool's child tasks: created as tools/call creates tasks, under the same defaults and quotas.
      children: childStarter(server.registry, {
        store,
        now: now ?? Date.now,
        defaults: taskDefaultsOf(options.tasks ?? {}),
        audit: options.tasks?.audit,
      }),
      events,
    }),
    scope: claimScopeOf(
      server.registry,
      options.worker?.removedToolDrainMs ?? 3_600_000,
      now ?? Date.now,
      options.worker?.holdUnservedTasks,
    ),
    observer:
      onToolError === undefined && options.tracing !== true
        ? options.worker?.observer
        : combineObservers(
            options.worker?.observer,
            options.tracing === true ? createTracingObserver() : undefined,
            onToolError === undefined ? undefined : { toolError: onToolError },
          ),
  });
}

export function createDurableMcp(options: DurableMcpOptions): DurableMcp {
  const store = options.backend?.tasks ?? options.store;
  if (store === undefined) throw new TypeError('createDurableMcp: give a backend (or a store)');
  const limits = resolveTaskLimits(options.limits);
  const sessions = options.backend?.sessions ?? options.sessions;
  const now = options.clock === undefined ? options.now : () => (options.clock as Clock).now();
  const server = createMcpServer({
    info: options.info ?? { name: 'durable-mcp', version: VERSION },
    toolSets: options.toolSets,
    instructions: options.instructions,
    stateSecret: options.stateSecret ?? options.backend?.stateSecret,
    // Every replica on the store refuses a one-time requestState any of them has acted on.
    consumeOnce: (key, expiresAt) => store.consumeOnce(key, expiresAt),
    now,
    steps: options.steps,
    maxStepBytes: limits.maxStepBytes,
    onToolError: options.onToolError,
    takeStepSlot: callStepSlots(callSlotDeps(store, now ?? Date.now, options.tasks?.slotWaitMs)),
    ...(options.tracing === true ? { wrapDispatch: traced } : {}),
    ...options.server,
    extensions: [
      createTasksExtension({
        store,
        now,
        // A task's runs join the trace of the tools/call that created it (its span, when one is recorded).
        ...(options.tracing === true ? { traceContext: activeTraceContext } : {}),
        ...options.tasks,
      }),
    ],
  });
  const publicUrl = options.publicUrl === undefined ? undefined : checkedPublicUrl(options.publicUrl);
  // Signed with the secret every replica shares (a bare store without one: this process's own, for its life).
  const tokens = createCallbackTokens(options.stateSecret ?? options.backend?.stateSecret ?? randomBytes(32));
  const worker = workerFor(options, store, server, limits, now, { publicUrl, tokens });
  worker?.start();
  let closed = false;
  const listening = new Set<RunningHttpServer>();
  return {
    server,
    worker,
    store,
    callbackTokens: tokens,
    async listen(listen = {}) {
      const host = listen.host ?? '127.0.0.1';
      const handler = createHttpHandler({
        // Legacy (2025-11-25) sessions and tasks/list live in the backend, so every replica serves every session.
        legacy: { store, sessions },
        // Events are delivered to this store's tasks: by their owners, and through this server's callback URLs.
        ...(store.events === undefined ? {} : { events: { events: store.events, tokens, now } }),
        ...listen.http,
        server,
        authenticator: listen.authenticator ?? createAnonymousAuthenticator(),
        origin: {
          allowedHosts: allowedHostsFor(host, [
            ...(listen.allowedHosts ?? []),
            ...(publicUrl === undefined ? [] : [new URL(publicUrl).hostname]),
          ]),
        },
      });
      const running = await listenHttp(handler, host, listen.port ?? 3000, listen.http?.path, listen.limits);
      listening.add(running);
      return {
        ...running,
        close: async (graceMs?: number) => {
          listening.delete(running);
          await running.close(graceMs);
        },
      };
    },
    async close(graceMs = 5_000) {
      if (closed) return;
      closed = true;
      const stopping = [...listening].map((running) => running.close(graceMs));
      await server.close();
      await Promise.all(stopping);
      await worker?.stop(graceMs);
      await (options.backend ?? store).close();
    },
  };
}
