// The io.modelcontextprotocol/tasks extension: task creation on tools/call, tasks/get, tasks/update, tasks/cancel.
import { InputResponsesV2Schema } from '@modelcontextprotocol/ext-tasks/core/v2';
import { isTaskIdShape, newTaskId } from '../../tasks/ids.js';
import type { TaskStore } from '../../tasks/store.js';
import type { JsonMap, LookupMiss, TaskOwner, TaskSnapshot } from '../../tasks/task.js';
import { hasExtension } from '../../wire/envelope.js';
import { isJsonObject, memoizeSerialization } from '../../wire/jsonrpc.js';
import { META_IDEMPOTENCY_KEY, TASKS_EXTENSION } from '../../wire/meta-keys.js';
import { sameJson } from '../../tasks/json-equal.js';
import { invalidParams, missingCapability } from '../../wire/protocol-error.js';
import { runRound, type RoundDeps } from '../run-round.js';
import type { RequestScope } from '../scope.js';
import type { ServerExtension } from '../server.js';
import type { ToolCall } from '../tools.js';
import type { AuditLog } from '../audit.js';
import { createRateLimiter } from './rate-limit.js';
import { ProtocolError } from '../../wire/protocol-error.js';
import type { JsonObject } from '../types.js';
import { toCreateTaskResult, toDetailedTask } from './task-wire.js';
import { createTaskSubscriptions } from './subscription.js';

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
}

/** JSON-RPC code for "slow down" answers (outside the reserved range); HTTP 429. */
export const TOO_MANY_REQUESTS = 429;

const ACK = { resultType: 'complete' };
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

const missError = (miss: LookupMiss): ProtocolError =>
  miss === 'expired' ? invalidParams('Task has expired') : invalidParams('Task not found');

const ownerOf = (scope: RequestScope): TaskOwner => ({
  tenant: scope.auth.tenant,
  principal: scope.auth.principal,
});

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
    if (snapshot.status === 'completed' || snapshot.status === 'failed' || snapshot.status === 'cancelled') {
      finished.set(snapshot, memoizeSerialization(result));
    }
    return result;
  };
  const who = (scope: RequestScope) => ({ tenant: scope.auth.tenant, principal: scope.auth.principal });

  /** Answers a lookup miss the same way whoever asked, and records it. */
  const deny = (scope: RequestScope, taskId: string, miss: LookupMiss): ProtocolError => {
    audit({ event: 'task.denied', ...who(scope), method: scope.method, taskId, outcome: miss });
    return missError(miss);
  };
  const readId = (params: JsonObject, scope: RequestScope): string => {
    try {
      return readTaskId(params);
    } catch (err) {
      audit({ event: 'task.denied', ...who(scope), method: scope.method, outcome: 'invalid_id' });
      throw err;
    }
  };

  async function interceptToolCall(call: ToolCall, params: JsonObject, scope: RequestScope, deps: RoundDeps) {
    const policy = call.tool.def.task;
    if (policy === undefined || policy.support === 'never') return undefined;
    if (!hasExtension(scope.envelope.clientCapabilities, TASKS_EXTENSION)) {
      if (policy.support === 'optional') return undefined;
      throw missingCapability(
        `Tool ${call.tool.def.name} runs only as a task: declare the ${TASKS_EXTENSION} extension`,
        REQUIRED,
      );
    }
    const key = readIdempotencyKey(params);
    /**
     * The task an earlier call with this key created, if it lives: looked up only where it changes what happens
     * before the creation (MRTR rounds, the quota); otherwise the creation itself finds it (one write, no read).
     */
    const earlier = async (): Promise<JsonObject | undefined> => {
      if (key === undefined) return undefined;
      const existing = await store.findByIdempotencyKey(ownerOf(scope), call.tool.def.name, key, now());
      if (existing === undefined) return undefined;
      if (!sameJson(existing.args, call.args)) throw reusedKey();
      const taskId = existing.snapshot.id;
      audit({ event: 'task.joined', ...who(scope), taskId, tool: call.tool.def.name, outcome: 'joined' });
      return toCreateTaskResult(existing.snapshot);
    };
    let answers: Record<string, JsonMap> = {};
    if (policy.prepare !== undefined) {
      // A retried call gets its task before any new MRTR round.
      const found = await earlier();
      if (found !== undefined) return found;
      const prepare = policy.prepare;
      const round = await runRound(deps, params, scope, call.tool.def.name, call.args, async (ctx, r) => {
        await prepare(call.args, ctx);
        return r.answers;
      });
      if (round.kind === 'input_required') return round.result;
      answers = round.value;
    }
    if (maxActive > 0 && (await store.countActive(ownerOf(scope))) >= maxActive) {
      // A retried call is no new task: the quota does not refuse it.
      const found = await earlier();
      if (found !== undefined) return found;
      audit({
        event: 'task.limited',
        ...who(scope),
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
      owner: ownerOf(scope),
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
      clientCapabilities: scope.envelope.clientCapabilities,
      answers,
      sensitive: policy.sensitive === true,
      idempotencyKey: key,
    });
    // An earlier call with the same key created the task (before, on another replica, in the same batch).
    const joined = snapshot.id !== id;
    audit({
      event: joined ? 'task.joined' : 'task.created',
      ...who(scope),
      taskId: snapshot.id,
      tool: call.tool.def.name,
      outcome: joined ? 'joined' : 'created',
    });
    return toCreateTaskResult(snapshot);
  }

  return {
    id: TASKS_EXTENSION,
    capability: {},
    interceptToolCall,
    subscriptions: [createTaskSubscriptions(store, now)],
    methods: {
      'tasks/get': async (params, scope) => {
        requireExtension(scope);
        const id = readId(params, scope);
        const wait = getLimiter?.take(`${scope.auth.tenant}\u0000${scope.auth.principal}`, now()) ?? 0;
        if (wait > 0) {
          audit({
            event: 'task.limited',
            ...who(scope),
            method: scope.method,
            taskId: id,
            outcome: 'rate_limited',
          });
          throw new ProtocolError(
            TOO_MANY_REQUESTS,
            `Polling too fast: retry after ${Math.ceil(wait / 1000)} s`,
            {
              retryAfterMs: wait,
            },
          );
        }
        const snapshot = await store.get(id, ownerOf(scope), now());
        if (typeof snapshot === 'string') throw deny(scope, id, snapshot);
        return getResult(snapshot);
      },
      'tasks/update': async (params, scope) => {
        requireExtension(scope);
        const id = readId(params, scope);
        const responses = params.inputResponses;
        if (!isJsonObject(responses)) throw invalidParams('Invalid params: inputResponses must be an object');
        const snapshot = await store.get(id, ownerOf(scope), now());
        if (typeof snapshot === 'string') throw deny(scope, id, snapshot);
        // Only outstanding keys count; unknown, answered and superseded keys are ignored.
        const outstanding: Record<string, JsonMap> = {};
        for (const [key, value] of Object.entries(responses)) {
          if (snapshot.inputRequests[key] === undefined) continue;
          if (!InputResponsesV2Schema.safeParse({ [key]: value }).success) {
            throw invalidParams(`Invalid params: malformed answer for input key "${key}"`);
          }
          outstanding[key] = value as JsonMap;
        }
        if (Object.keys(outstanding).length > 0) {
          const answered = await store.answer(id, ownerOf(scope), outstanding, now());
          if (!answered.ok) throw deny(scope, id, answered.miss);
          const outcome = answered.resumed ? 'resumed' : 'partial';
          audit({ event: 'task.answered', ...who(scope), taskId: id, outcome });
        }
        return { ...ACK };
      },
      'tasks/cancel': async (params, scope) => {
        requireExtension(scope);
        const id = readId(params, scope);
        const cancelled = await store.requestCancel(id, ownerOf(scope), now());
        if (!cancelled.ok) throw deny(scope, id, cancelled.miss);
        const outcome = cancelled.cancelledNow
          ? 'cancelled'
          : cancelled.running
            ? 'cancel_requested'
            : 'already_ended';
        audit({ event: 'task.cancel', ...who(scope), taskId: id, outcome });
        return { ...ACK };
      },
    },
  };
}
