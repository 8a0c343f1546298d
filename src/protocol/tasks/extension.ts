// The io.modelcontextprotocol/tasks extension: task creation on tools/call, tasks/get, tasks/update, tasks/cancel.
import type { TaskStore } from '../../tasks/store.js';
import { storedBytesLimitOf } from '../../tasks/limits.js';
import { hasExtension } from '../../wire/envelope.js';
import { META_DEBOUNCE, TASKS_EXTENSION } from '../../wire/meta-keys.js';
import { missingCapability } from '../../wire/protocol-error.js';
import type { AuditLog } from '../audit.js';
import type { RoundDeps } from '../run-round.js';
import type { RequestScope } from '../scope.js';
import type { ServerExtension } from '../server.js';
import { callToolSync, type ToolCall } from '../tools.js';
import { callSlotDeps, holdingCallSlot, type CallSlotDeps } from './call-slots.js';
import type { JsonObject } from '../types.js';
import { background, type BackgroundDeps } from './background.js';
import { facadeTools } from './facade-tools.js';
import { resolveFallback, toolBudget, type Fallback, type FallbackOptions } from './fallback.js';
import { createTaskSubscriptions } from './subscription.js';
import { answerInputs, cancelTask, createTaskAccess, settleTask, type TaskAccess } from './task-access.js';
import { REQUIRED, taskMethods } from './task-methods.js';
import { createStreamResources } from './stream-resources.js';
import { startTask, type StartTask, type TaskDefaults } from './task-start.js';
import { toCreateTaskResult } from './task-wire.js';
import { missingForAsks, refusalForAsks } from '../tool-asks.js';
import { tasksToolsView } from './tools-view.js';
import type { TraceContext } from '../../tasks/trace-context.js';

export { TOO_MANY_REQUESTS } from './task-access.js';

export interface TasksExtensionOptions {
  store: TaskStore;
  /** TTL for tools that declare none; null for unlimited. Default one hour. */
  defaultTtlMs?: number | null;
  /** Suggested poll interval for tools that declare none. Default 1000 ms. */
  defaultPollIntervalMs?: number;
  now?: () => number;
  /** Structured audit events for creations, cancels, answers and denied or limited access. */
  audit?: AuditLog;
  /** Per-principal limit on tasks/get polling (default 100/s with a burst of 200); false disables it. */
  tasksGetRate?: { perSecond: number; burst: number } | false;
  /** Cap on non-terminal tasks per principal (default 1000); 0 disables it. */
  maxActiveTasksPerPrincipal?: number;
  /**
   * Cap on tasks of any status kept per principal (default 10,000): finished and cancelled tasks count until they
   * expire and are swept, so one caller cannot fill the store. 0 disables it.
   */
  maxStoredTasksPerPrincipal?: number;
  /** The same two caps for each tenant, all its principals together (default: none; 0 disables). */
  maxActiveTasksPerTenant?: number;
  maxStoredTasksPerTenant?: number;
  /**
   * Cap on the bytes the kept tasks of a principal store (TaskStore.storedBytes: arguments, results, step values,
   * input requests and answers) until they are purged (default 1 GiB; 0 disables it): a call whose task would pass it
   * is refused. Give the worker the same value (WorkerOptions.maxStoredBytesPerPrincipal) for step values.
   */
  maxStoredBytesPerPrincipal?: number;
  /**
   * Tasks for clients that do not declare the extension: their calls wait up to a budget, then hand back the task
   * with facade tools to follow it (on by default for `optional` tools); false turns it off.
   */
  fallback?: FallbackOptions | false;
  /**
   * Honour the caller's `_meta["dev.durable-mcp/priority"]` on tools/call (a whole number from -100 to 100, replacing
   * the tool's TaskPolicy.priority; any other value is refused with -32602). It reorders only the caller's own tasks.
   * Default false: the key is ignored.
   */
  allowCallerPriority?: boolean;
  /**
   * How long a call that runs within its request (a `never` tool, or a synchronous call) of a tool with
   * `task.concurrency` waits for a slot of its key before it is refused with a server-busy error (JSON-RPC 429, HTTP
   * 429 with Retry-After). Default 10,000 ms; 0 refuses at once when the key is full.
   */
  slotWaitMs?: number;
  /**
   * The trace context of the request being served (e.g. its active span, when tracing is on): kept with a task the
   * request creates, so that its runs join that trace. Without it, or when it gives none, the caller's W3C
   * `_meta.traceparent` (and `tracestate`) is kept, once checked (an invalid one is ignored).
   */
  traceContext?: () => TraceContext | undefined;
}

type Intercept = NonNullable<ServerExtension['interceptToolCall']>;

/** tools/call of a tool with a task policy: a task for clients with the extension, the hand-back for the others. */
function toolCallInterceptor(bg: BackgroundDeps, slots: CallSlotDeps): Intercept {
  // A call that runs within its request takes a slot of its tool's concurrency key, as its tasks do.
  const runSync = (call: ToolCall, params: JsonObject, scope: RequestScope, deps: RoundDeps) =>
    call.tool.def.task?.concurrency === undefined
      ? undefined
      : holdingCallSlot(slots, call, scope, () => callToolSync(deps, call, params, scope));
  return async (call: ToolCall, params: JsonObject, scope: RequestScope, deps: RoundDeps) => {
    const policy = call.tool.def.task;
    if (policy === undefined) return undefined;
    if (policy.support === 'never') return runSync(call, params, scope, deps);
    const caps = scope.envelope.clientCapabilities;
    if (!hasExtension(caps, TASKS_EXTENSION)) {
      const budget = toolBudget(policy, bg.fallback);
      // Handed back: the facade tools answer any input the task asks.
      if (budget !== undefined) return background(bg, call, params, scope, deps, budget);
      if (policy.support === 'optional') return runSync(call, params, scope, deps);
      // Named with what else the task may ask that this client lacks: all of it is needed.
      throw missingCapability(
        `Tool ${call.tool.def.name} runs only as a task: declare the ${TASKS_EXTENSION} extension`,
        { ...REQUIRED, ...missingForAsks(call.tool.def.asks, caps) },
      );
    }
    // Refused before any prepare round or task: the task could ask for input this client cannot answer.
    const refusal = refusalForAsks(call.tool.def, caps);
    if (refusal !== undefined) throw refusal;
    const started = await bg.start(call, params, scope, deps);
    if ('answer' in started) return started.answer;
    const result = toCreateTaskResult(started.task);
    return started.debounce === undefined
      ? result
      : { ...result, _meta: { [META_DEBOUNCE]: started.debounce } };
  };
}

/** The facade tools, sharing the lookups, answers and cancels of tasks/* (none when the fallback is off). */
function facadeOf(access: TaskAccess, fallback: Fallback): ReturnType<typeof facadeTools> {
  if (!fallback.enabled) return [];
  return facadeTools({
    store: access.store,
    fallback,
    now: access.now,
    deny: access.denyTo,
    pollWait: access.pollWait,
    answer: (auth, taskId, task, responses) =>
      answerInputs(access, auth, fallback.names.respond, taskId, task, responses),
    cancel: (auth, taskId) => cancelTask(access, auth, taskId, fallback.names.cancel),
    settle: (taskId, owner, deadline, signal) => settleTask(access, taskId, owner, deadline, signal),
  });
}

/** The task defaults and quotas of these options, as tools/call (and ctx.callTool's child tasks) apply them. */
export function taskDefaultsOf(options: Omit<TasksExtensionOptions, 'store'>): TaskDefaults {
  return {
    defaultTtlMs: options.defaultTtlMs,
    defaultPollIntervalMs: options.defaultPollIntervalMs,
    maxActive: options.maxActiveTasksPerPrincipal ?? 1_000,
    maxStored: options.maxStoredTasksPerPrincipal ?? 10_000,
    maxActivePerTenant: options.maxActiveTasksPerTenant ?? 0,
    maxStoredPerTenant: options.maxStoredTasksPerTenant ?? 0,
    maxStoredBytes: storedBytesLimitOf(options.maxStoredBytesPerPrincipal),
    allowCallerPriority: options.allowCallerPriority === true,
    traceContext: options.traceContext,
  };
}

export function createTasksExtension(options: TasksExtensionOptions): ServerExtension {
  const access = createTaskAccess(options);
  const fallback = resolveFallback(options.fallback);
  const defaults = taskDefaultsOf(options);
  const start: StartTask = (call, params, scope, deps, capabilities) =>
    startTask(access, defaults, call, params, scope, deps, capabilities);
  const facade = facadeOf(access, fallback);
  return {
    id: TASKS_EXTENSION,
    capability: {},
    interceptToolCall: toolCallInterceptor(
      { access, fallback, start },
      callSlotDeps(options.store, access.now, options.slotWaitMs),
    ),
    tools: facade,
    toolsView: tasksToolsView(facade, fallback),
    subscriptions: [createTaskSubscriptions(access.store, access.now)],
    ...(options.store.streams === undefined
      ? {}
      : { resources: createStreamResources(access.store, access.now) }),
    methods: taskMethods(access),
  };
}
