// The io.modelcontextprotocol/tasks extension: task creation on tools/call, tasks/get, tasks/update, tasks/cancel.
import { InputResponsesV2Schema } from '@modelcontextprotocol/ext-tasks/core/v2';
import { isTaskIdShape, newTaskId } from '../../tasks/ids.js';
import type { TaskStore } from '../../tasks/store.js';
import {
  isTerminal,
  LOOKUP_MISS_MESSAGES,
  ownerKey,
  ownerOf,
  type JsonMap,
  type LookupMiss,
  type TaskOwner,
  type TaskSnapshot,
} from '../../tasks/task.js';
import { hasExtension } from '../../wire/envelope.js';
import { isJsonObject, memoizeSerialization } from '../../wire/jsonrpc.js';
import { META_IDEMPOTENCY_KEY, TASKS_EXTENSION } from '../../wire/meta-keys.js';
import { sameJson } from '../../tasks/json-equal.js';
import { invalidParams, missingCapability } from '../../wire/protocol-error.js';
import { runRound, type RoundDeps } from '../run-round.js';
import type { RequestScope } from '../scope.js';
import type { ServerExtension, ToolsView } from '../server.js';
import type { ToolCall } from '../tools.js';
import type { AuditLog } from '../audit.js';
import { createRateLimiter } from './rate-limit.js';
import { ProtocolError } from '../../wire/protocol-error.js';
import type { JsonObject } from '../types.js';
import { toCreateTaskResult, toDetailedTask } from './task-wire.js';
import { createTaskSubscriptions } from './subscription.js';
import type { AuthInfo } from '../context.js';
import type { RegisteredTool } from '../registry.js';
import { MRTR_STATE_TTL_MS, missingCapabilityFor } from '../mrtr.js';
import { requestBinding } from '../request-state.js';
import { principalKey } from '../run-round.js';
import type { InputRequest } from '../types.js';
import { facadeTools } from './facade-tools.js';
import {
  describeTask,
  duration,
  resolveFallback,
  toolBudget,
  withHandle,
  type FallbackOptions,
} from './fallback.js';
import { watchDelay, watchTask } from './task-watch.js';

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
   * Tasks for clients that do not declare the extension: their calls wait up to a budget, then hand back the task
   * with facade tools to follow it (on by default for `optional` tools); false turns it off.
   */
  fallback?: FallbackOptions | false;
}

/** JSON-RPC code for "slow down" answers (outside the reserved range); HTTP 429. */
export const TOO_MANY_REQUESTS = 429;

const ACK = { resultType: 'complete' };
/** What the facade tools can answer: a task handed back may ask any of it. */
const FACADE_ANSWERS = { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} };
const REQUIRED = { extensions: { [TASKS_EXTENSION]: {} } };

function requireExtension(scope: RequestScope): void {
  if (!hasExtension(scope.envelope.clientCapabilities, TASKS_EXTENSION)) {
    throw missingCapability(
      `${scope.method} needs the ${TASKS_EXTENSION} extension in this request's capabilities`,
      REQUIRED,
    );
  }
}

function readTaskId(params: JsonObject): string {
  const id = params.taskId;
  if (typeof id !== 'string') throw invalidParams('Invalid params: taskId must be a string');
  if (!isTaskIdShape(id)) throw invalidParams('invalid task id');
  return id;
}

/** The caller's idempotency key of a tools/call, if it sent one (any string of 1 to 255 characters). */
function readIdempotencyKey(params: JsonObject): string | undefined {
  const meta = params._meta;
  const key = isJsonObject(meta) ? meta[META_IDEMPOTENCY_KEY] : undefined;
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || key.length === 0 || key.length > 255)
    throw invalidParams(
      `Invalid params: _meta["${META_IDEMPOTENCY_KEY}"] must be a string of 1 to 255 characters`,
    );
  return key;
}

const reusedKey = (): ProtocolError =>
  invalidParams('Invalid params: this idempotency key was already used with different arguments');

const missError = (miss: LookupMiss): ProtocolError => invalidParams(LOOKUP_MISS_MESSAGES[miss]);

export function createTasksExtension(options: TasksExtensionOptions): ServerExtension {
  const { store } = options;
  const now = options.now ?? Date.now;
  const audit: AuditLog = options.audit ?? (() => undefined);
  const rate = options.tasksGetRate === undefined ? { perSecond: 100, burst: 200 } : options.tasksGetRate;
  const getLimiter = rate === false ? undefined : createRateLimiter(rate.perSecond, rate.burst);
  const maxActive = options.maxActiveTasksPerPrincipal ?? 1_000;
  // A terminal snapshot never changes: its tasks/get result is built and serialised once (stores may hand back
  // the same snapshot object for repeated polls).
  const finished = new WeakMap<TaskSnapshot, JsonObject>();
  const getResult = (snapshot: TaskSnapshot): JsonObject => {
    const cached = finished.get(snapshot);
    if (cached !== undefined) return cached;
    const result: JsonObject = { resultType: 'complete', ...toDetailedTask(snapshot) };
    if (isTerminal(snapshot.status)) {
      finished.set(snapshot, memoizeSerialization(result));
    }
    return result;
  };
  const fallback = resolveFallback(options.fallback);

  /** Answers a lookup miss the same way whoever asked, and records it. */
  const denyTo = (auth: AuthInfo, method: string, taskId: string, miss: LookupMiss): ProtocolError => {
    audit({ event: 'task.denied', ...ownerOf(auth), method, taskId, outcome: miss });
    return missError(miss);
  };
  const deny = (scope: RequestScope, taskId: string, miss: LookupMiss): ProtocolError =>
    denyTo(scope.auth, scope.method, taskId, miss);
  const readId = (params: JsonObject, scope: RequestScope): string => {
    try {
      return readTaskId(params);
    } catch (err) {
      audit({ event: 'task.denied', ...ownerOf(scope.auth), method: scope.method, outcome: 'invalid_id' });
      throw err;
    }
  };
  /** ms before this principal may poll again (0: now), recorded when it must wait. */
  const pollWait = (auth: AuthInfo, method: string, taskId: string): number => {
    const wait = getLimiter?.take(ownerKey(auth), now()) ?? 0;
    if (wait > 0) audit({ event: 'task.limited', ...ownerOf(auth), method, taskId, outcome: 'rate_limited' });
    return wait;
  };

  /** Writes the answers to the task's outstanding keys; returns the keys it ignored (not outstanding). */
  async function answer(
    auth: AuthInfo,
    method: string,
    taskId: string,
    task: TaskSnapshot,
    responses: JsonObject,
  ): Promise<string[]> {
    const outstanding: Record<string, JsonMap> = {};
    const ignored: string[] = [];
    for (const [key, value] of Object.entries(responses)) {
      if (task.inputRequests[key] === undefined) {
        ignored.push(key);
        continue;
      }
      if (!InputResponsesV2Schema.safeParse({ [key]: value }).success) {
        throw invalidParams(`Invalid params: malformed answer for input key "${key}"`);
      }
      outstanding[key] = value as JsonMap;
    }
    if (Object.keys(outstanding).length > 0) {
      const answered = await store.answer(taskId, ownerOf(auth), outstanding, now());
      if (!answered.ok) throw denyTo(auth, method, taskId, answered.miss);
      const outcome = answered.resumed ? 'resumed' : 'partial';
      audit({ event: 'task.answered', ...ownerOf(auth), taskId, outcome });
    }
    return ignored;
  }

  async function cancel(auth: AuthInfo, taskId: string, method: string): Promise<void> {
    const cancelled = await store.requestCancel(taskId, ownerOf(auth), now());
    if (!cancelled.ok) throw denyTo(auth, method, taskId, cancelled.miss);
    const outcome = cancelled.cancelledNow
      ? 'cancelled'
      : cancelled.running
        ? 'cancel_requested'
        : 'already_ended';
    audit({ event: 'task.cancel', ...ownerOf(auth), taskId, outcome });
  }

  /**
   * Watches the task until it ends or waits for input, or until the deadline (or the request's end): the latest
   * snapshot. `onChange` hears every snapshot read on the way.
   */
  async function settle(
    taskId: string,
    owner: TaskOwner,
    deadline: number,
    signal: AbortSignal,
    onChange?: (task: TaskSnapshot) => void,
  ): Promise<TaskSnapshot | LookupMiss> {
    const watch = watchTask(store, taskId, signal);
    try {
      for (;;) {
        const task = await store.get(taskId, owner, now());
        if (typeof task === 'string' || isTerminal(task.status) || task.status === 'input_required')
          return task;
        onChange?.(task);
        const left = deadline - now();
        if (left <= 0 || signal.aborted) return task;
        await watch.next(Math.min(left, watchDelay(store, task.pollIntervalMs)));
      }
    } finally {
      watch.stop();
    }
  }

  /**
   * A task for this call (or the one an earlier call with the same idempotency key created), or the answer to give
   * instead: the MRTR round of the tool's `prepare`.
   */
  async function start(
    call: ToolCall,
    params: JsonObject,
    scope: RequestScope,
    deps: RoundDeps,
    capabilities?: JsonObject,
  ): Promise<{ task: TaskSnapshot } | { answer: JsonObject }> {
    const policy = call.tool.def.task ?? { support: 'optional' };
    const key = readIdempotencyKey(params);
    /**
     * The task an earlier call with this key created, if it lives: looked up only where it changes what happens
     * before the creation (MRTR rounds, the quota); otherwise the creation itself finds it (one write, no read).
     */
    const earlier = async (): Promise<TaskSnapshot | undefined> => {
      if (key === undefined) return undefined;
      const existing = await store.findByIdempotencyKey(ownerOf(scope.auth), call.tool.def.name, key, now());
      if (existing === undefined) return undefined;
      if (!sameJson(existing.args, call.args)) throw reusedKey();
      const taskId = existing.snapshot.id;
      audit({
        event: 'task.joined',
        ...ownerOf(scope.auth),
        taskId,
        tool: call.tool.def.name,
        outcome: 'joined',
      });
      return existing.snapshot;
    };
    let answers: Record<string, JsonMap> = {};
    if (policy.prepare !== undefined) {
      // A retried call gets its task before any new MRTR round.
      const found = await earlier();
      if (found !== undefined) return { task: found };
      const prepare = policy.prepare;
      const round = await runRound(deps, params, scope, call.tool.def.name, call.args, async (ctx, r) => {
        await prepare(call.args, ctx);
        return r.answers;
      });
      if (round.kind === 'input_required') return { answer: round.result };
      answers = round.value;
    }
    if (maxActive > 0 && (await store.countActive(ownerOf(scope.auth))) >= maxActive) {
      // A retried call is no new task: the quota does not refuse it.
      const found = await earlier();
      if (found !== undefined) return { task: found };
      audit({
        event: 'task.limited',
        ...ownerOf(scope.auth),
        tool: call.tool.def.name,
        outcome: 'too_many_active_tasks',
      });
      throw new ProtocolError(
        TOO_MANY_REQUESTS,
        `Too many unfinished tasks (limit ${maxActive}); wait for some to end`,
        {
          limit: maxActive,
        },
      );
    }
    const id = newTaskId();
    const snapshot = await store.create({
      id,
      owner: ownerOf(scope.auth),
      tool: call.tool.def.name,
      args: call.args,
      createdAt: now(),
      ttlMs:
        policy.ttlMs === undefined
          ? options.defaultTtlMs === undefined
            ? 3_600_000
            : options.defaultTtlMs
          : policy.ttlMs,
      pollIntervalMs: policy.pollIntervalMs ?? options.defaultPollIntervalMs ?? 1_000,
      statusMessage: 'The task is now in progress.',
      replayAfterCrash: policy.replayAfterCrash ?? true,
      clientCapabilities: capabilities ?? scope.envelope.clientCapabilities,
      answers,
      sensitive: policy.sensitive === true,
      idempotencyKey: key,
    });
    // An earlier call with the same key created the task (before, on another replica, in the same batch).
    const joined = snapshot.id !== id;
    audit({
      event: joined ? 'task.joined' : 'task.created',
      ...ownerOf(scope.auth),
      taskId: snapshot.id,
      tool: call.tool.def.name,
      outcome: joined ? 'joined' : 'created',
    });
    return { task: snapshot };
  }

  /** The binding of a handed-back task's requestState: this caller, this tool, these arguments. */
  const bindingOf = (call: ToolCall, scope: RequestScope): string =>
    requestBinding(principalKey(scope), scope.method, call.tool.def.name, call.args);

  /**
   * The task an MRTR retry of a call without the extension continues (its requestState names it), with the retry's
   * answers written; undefined when the call is no such retry.
   */
  async function resumed(call: ToolCall, params: JsonObject, scope: RequestScope, deps: RoundDeps) {
    if (typeof params.requestState !== 'string') return undefined;
    const opened = deps.sealer.unseal(params.requestState, bindingOf(call, scope), now());
    const taskId =
      opened.ok && isJsonObject(opened.value) && typeof opened.value.t === 'string'
        ? opened.value.t
        : undefined;
    if (taskId === undefined) {
      // Another round's state (the tool's prepare) is read, and judged, by that round.
      if (call.tool.def.task?.prepare !== undefined) return undefined;
      const reason = opened.ok ? 'issued for another request' : opened.reason;
      throw invalidParams(`Invalid params: requestState rejected (${reason})`);
    }
    const task = await store.get(taskId, ownerOf(scope.auth), now());
    if (typeof task === 'string') throw deny(scope, taskId, task);
    const responses = params.inputResponses;
    if (responses !== undefined) {
      if (!isJsonObject(responses)) throw invalidParams('Invalid params: inputResponses must be an object');
      await answer(scope.auth, scope.method, taskId, task, responses);
    }
    return task;
  }

  /** Whether this client can answer every request itself, as MRTR rounds of its call. */
  const answerable = (task: TaskSnapshot, scope: RequestScope): boolean =>
    Object.values(task.inputRequests).every(
      (r) =>
        missingCapabilityFor(r as unknown as InputRequest, scope.envelope.clientCapabilities) === undefined,
    );

  /**
   * A call from a client without the extension: the task runs while the call waits up to the budget. It answers
   * like a synchronous call when the task ends in time (or asks its input as MRTR rounds the client can answer);
   * otherwise it hands the task back as an ordinary result, with the facade tools to follow it.
   */
  async function background(
    call: ToolCall,
    params: JsonObject,
    scope: RequestScope,
    deps: RoundDeps,
    budgetMs: number,
  ): Promise<JsonObject> {
    const deadline = now() + budgetMs;
    let task = await resumed(call, params, scope, deps);
    if (task === undefined) {
      // The facade answers any input the task asks (a model asks its user, or answers itself).
      const caps = { ...scope.envelope.clientCapabilities, ...FACADE_ANSWERS };
      const started = await start(call, params, scope, deps, caps);
      if ('answer' in started) return started.answer;
      task = started.task;
    }
    const token = scope.envelope.progressToken;
    let told = 0;
    let lastMessage = task.statusMessage;
    const onChange =
      token === undefined
        ? undefined
        : (t: TaskSnapshot): void => {
            // Each new status message is progress for hosts that keep a call alive while it reports some.
            if (t.statusMessage === lastMessage || scope.signal.aborted) return;
            lastMessage = t.statusMessage;
            const progress: JsonObject = { progressToken: token, progress: ++told };
            if (t.statusMessage !== undefined) progress.message = t.statusMessage;
            scope.emit('notifications/progress', progress);
          };
    const settled = await settle(task.id, ownerOf(scope.auth), deadline, scope.signal, onChange);
    if (typeof settled === 'string') throw deny(scope, task.id, settled);
    const name = call.tool.def.name;
    switch (settled.status) {
      case 'completed':
        return { ...(settled.result as JsonObject), resultType: 'complete' };
      case 'failed': {
        const error = settled.error ?? { code: -32603, message: 'Task failed' };
        throw new ProtocolError(error.code, error.message, error.data);
      }
      case 'input_required':
        if (answerable(settled, scope)) {
          const state = deps.sealer.seal(
            { t: settled.id },
            bindingOf(call, scope),
            now() + MRTR_STATE_TTL_MS,
          );
          return { resultType: 'input_required', inputRequests: settled.inputRequests, requestState: state };
        }
        break;
      default:
        break;
    }
    const late =
      budgetMs > 0 && settled.status === 'working' ? ` (it did not finish within ${duration(budgetMs)})` : '';
    const opening =
      `${name} goes on in the background as task ${settled.id}${late}. ` +
      `Do not call ${name} again for this request: that would start the work over.`;
    return { resultType: 'complete', ...describeTask(settled, fallback.names, fallback.budgetMs, opening) };
  }

  async function interceptToolCall(call: ToolCall, params: JsonObject, scope: RequestScope, deps: RoundDeps) {
    const policy = call.tool.def.task;
    if (policy === undefined || policy.support === 'never') return undefined;
    if (!hasExtension(scope.envelope.clientCapabilities, TASKS_EXTENSION)) {
      const budget = toolBudget(policy, fallback);
      if (budget !== undefined) return background(call, params, scope, deps, budget);
      if (policy.support === 'optional') return undefined;
      throw missingCapability(
        `Tool ${call.tool.def.name} runs only as a task: declare the ${TASKS_EXTENSION} extension`,
        REQUIRED,
      );
    }
    const started = await start(call, params, scope, deps);
    return 'answer' in started ? started.answer : toCreateTaskResult(started.task);
  }

  const facade = fallback.enabled
    ? facadeTools({
        store,
        fallback,
        now,
        deny: denyTo,
        pollWait,
        answer: (auth, taskId, task, responses) =>
          answer(auth, fallback.names.respond, taskId, task, responses),
        cancel: (auth, taskId) => cancel(auth, taskId, fallback.names.cancel),
        settle,
      })
    : [];
  const facadeNames = new Set(facade.map((t) => t.name));
  // The listing a tool shows clients without the extension: its outputSchema also admits a hand-back.
  const widened = new WeakMap<RegisteredTool, JsonObject>();
  const fallbackListing = (tool: RegisteredTool): JsonObject => {
    const schema = tool.def.outputSchema;
    if (schema === undefined || toolBudget(tool.def.task, fallback) === undefined) return tool.listing;
    let listing = widened.get(tool);
    if (listing === undefined) {
      listing = { ...tool.listing, outputSchema: withHandle(schema) };
      widened.set(tool, listing);
    }
    return listing;
  };

  /** Clients that declare the extension see the tools as registered, without the facade. */
  const awareView: ToolsView = {
    key: 'tasks',
    list: (tools) => tools.flatMap((t) => (facadeNames.has(t.def.name) ? [] : [t.listing])),
  };
  /** The others see the facade (while some tool hands tasks back) and widened output schemas. */
  const fallbackView: ToolsView = {
    key: 'fallback',
    list(tools) {
      const handing = tools.some((t) => toolBudget(t.def.task, fallback) !== undefined);
      return tools.flatMap((t) => (!handing && facadeNames.has(t.def.name) ? [] : [fallbackListing(t)]));
    },
  };

  return {
    id: TASKS_EXTENSION,
    capability: {},
    interceptToolCall,
    tools: facade,
    toolsView: (scope) =>
      facade.length === 0
        ? undefined
        : hasExtension(scope.envelope.clientCapabilities, TASKS_EXTENSION)
          ? awareView
          : fallbackView,
    subscriptions: [createTaskSubscriptions(store, now)],
    methods: {
      'tasks/get': async (params, scope) => {
        requireExtension(scope);
        const id = readId(params, scope);
        const wait = pollWait(scope.auth, scope.method, id);
        if (wait > 0) {
          throw new ProtocolError(
            TOO_MANY_REQUESTS,
            `Polling too fast: retry after ${Math.ceil(wait / 1000)} s`,
            {
              retryAfterMs: wait,
            },
          );
        }
        const snapshot = await store.get(id, ownerOf(scope.auth), now());
        if (typeof snapshot === 'string') throw deny(scope, id, snapshot);
        return getResult(snapshot);
      },
      'tasks/update': async (params, scope) => {
        requireExtension(scope);
        const id = readId(params, scope);
        const responses = params.inputResponses;
        if (!isJsonObject(responses)) throw invalidParams('Invalid params: inputResponses must be an object');
        const snapshot = await store.get(id, ownerOf(scope.auth), now());
        if (typeof snapshot === 'string') throw deny(scope, id, snapshot);
        // Only outstanding keys count; unknown, answered and superseded keys are ignored.
        await answer(scope.auth, scope.method, id, snapshot, responses);
        return { ...ACK };
      },
      'tasks/cancel': async (params, scope) => {
        requireExtension(scope);
        await cancel(scope.auth, readId(params, scope), scope.method);
        return { ...ACK };
      },
    },
  };
}
