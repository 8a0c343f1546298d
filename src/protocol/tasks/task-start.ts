// Task creation for a tools/call: the caller's idempotency key, the tool's prepare round, the per-principal quota of
// unfinished tasks, then one store write (which finds the task an earlier call with the same key created).
import { ActiveLimitError } from '../../tasks/errors.js';
import { newTaskId } from '../../tasks/ids.js';
import { concurrencyOf } from '../../tasks/concurrency.js';
import { debouncedMessage, debounceOf } from '../../tasks/debounce.js';
import { priorityOf, priorityProblem } from '../../tasks/priority.js';
import { rateLimitOf } from '../../tasks/rate-limit.js';
import { traceContextOfMeta, type TraceContext } from '../../tasks/trace-context.js';
import { ownerOf, type NewTask, type TaskSnapshot } from '../../tasks/task.js';
import { checkIdempotencyKey } from '../../wire/idempotency-key.js';
import { isJsonObject } from '../../wire/jsonrpc.js';
import { META_IDEMPOTENCY_KEY, META_PRIORITY } from '../../wire/meta-keys.js';
import { invalidParams, ProtocolError } from '../../wire/protocol-error.js';
import type { AuthInfo } from '../tool-types.js';
import type { RegisteredTool } from '../registry.js';
import type { TaskPolicy } from '../define.js';
import { runRound, type RoundDeps } from '../run-round.js';
import type { RequestScope } from '../scope.js';
import type { ToolCall } from '../tools.js';
import type { JsonObject } from '../types.js';
import { TOO_MANY_REQUESTS, type TaskAccess } from './task-access.js';

/** The server's defaults under each tool's own policy, and the quota. */
export interface TaskDefaults {
  /** TTL for tools that declare none; null for unlimited; undefined for one hour. */
  defaultTtlMs?: number | null;
  /** Suggested poll interval for tools that declare none (undefined: 1000 ms). */
  defaultPollIntervalMs?: number;
  /** Cap on non-terminal tasks per principal; 0 disables it. */
  maxActive: number;
  /** Cap on tasks of any status kept per principal (finished ones until swept); 0 or undefined disables it. */
  maxStored?: number;
  /** The same two caps for each tenant, all its principals together; 0 or undefined disables each. */
  maxActivePerTenant?: number;
  maxStoredPerTenant?: number;
  /** Cap on the bytes the kept tasks of a principal store (NewTask.storedBytesLimit); undefined disables it. */
  maxStoredBytes?: number;
  /** Honour the caller's `_meta["dev.durable-mcp/priority"]` (otherwise it is ignored). */
  allowCallerPriority?: boolean;
  /** The trace of the request being served (TasksExtensionOptions.traceContext), before the caller's `_meta` one. */
  traceContext?: () => TraceContext | undefined;
}

/**
 * The task of a call, or the answer to give instead (an MRTR round of the tool's `prepare`). For a tool with a
 * debounce window, `debounce` tells whether the call joined a task an earlier call created and whether it replaced
 * that task's arguments (META_DEBOUNCE).
 */
export type Started =
  { task: TaskSnapshot; debounce?: { joined: boolean; replaced: boolean } } | { answer: JsonObject };

/** Starts (or joins) the task of a call; `capabilities` replace the request's as the ones the task may ask of. */
export type StartTask = (
  call: ToolCall,
  params: JsonObject,
  scope: RequestScope,
  deps: RoundDeps,
  capabilities?: JsonObject,
) => Promise<Started>;

/** The caller's idempotency key of a tools/call, if it sent one (1 to 255 characters, none a control character). */
function readIdempotencyKey(params: JsonObject): string | undefined {
  const meta = params._meta;
  const key = isJsonObject(meta) ? meta[META_IDEMPOTENCY_KEY] : undefined;
  if (key === undefined) return undefined;
  const checked = checkIdempotencyKey(key);
  if (!checked.ok) throw invalidParams(`Invalid params: _meta["${META_IDEMPOTENCY_KEY}"] ${checked.reason}`);
  return checked.value;
}

/**
 * The caller's priority of a tools/call, where the server allows it: a whole number in PRIORITY_RANGE, or -32602.
 * Where it does not, the key is ignored, as a server that does not know it would.
 */
function readCallerPriority(params: JsonObject, allowed: boolean | undefined): number | undefined {
  const meta = params._meta;
  const value = allowed === true && isJsonObject(meta) ? meta[META_PRIORITY] : undefined;
  if (value === undefined) return undefined;
  const problem = priorityProblem(value);
  if (problem !== undefined) throw invalidParams(`Invalid params: _meta["${META_PRIORITY}"] ${problem}`);
  return value as number;
}

/**
 * The trace a call's task joins: the request's own span where tracing gives one, else the caller's W3C `traceparent`
 * (and `tracestate`) of `_meta`, checked strictly; one not valid is ignored, as a server without tracing would.
 */
function traceOfCall(params: JsonObject, defaults: TaskDefaults): TraceContext | undefined {
  return defaults.traceContext?.() ?? traceContextOfMeta(params._meta);
}

/**
 * The task an earlier call with this key created, if it lives (the store rejects a key used with other arguments):
 * looked up only where it changes what happens before the creation (MRTR rounds, the quota); otherwise the creation
 * itself finds it (one write, no read).
 */
async function earlierTask(
  access: TaskAccess,
  call: ToolCall,
  auth: AuthInfo,
  key: string | undefined,
): Promise<TaskSnapshot | undefined> {
  if (key === undefined) return undefined;
  const tool = call.tool.def.name;
  const existing = await access.store.findByIdempotencyKey(ownerOf(auth), tool, key, call.args, access.now());
  if (existing === undefined) return undefined;
  access.audit({ event: 'task.joined', ...ownerOf(auth), taskId: existing.id, tool, outcome: 'joined' });
  return existing;
}

/** The tenant's caps, when any is set. */
function tenantLimitsOf({
  maxActivePerTenant: active = 0,
  maxStoredPerTenant: stored = 0,
}: TaskDefaults): NewTask['tenantLimits'] {
  if (active <= 0 && stored <= 0) return undefined;
  return { active: active > 0 ? active : undefined, stored: stored > 0 ? stored : undefined };
}

/** The refusal of a new task over a quota, recorded. */
function overQuota(
  access: TaskAccess,
  call: ToolCall,
  auth: AuthInfo,
  refusal: ActiveLimitError,
): ProtocolError {
  const active = refusal.quota === 'active' || refusal.quota === 'tenant-active';
  const outcome = active
    ? 'too_many_active_tasks'
    : refusal.quota === 'stored-bytes'
      ? 'too_many_stored_bytes'
      : 'too_many_stored_tasks';
  access.audit({ event: 'task.limited', ...ownerOf(auth), tool: call.tool.def.name, outcome });
  return new ProtocolError(
    TOO_MANY_REQUESTS,
    `${refusal.message}; ${active ? 'wait for some to end' : 'finished tasks count until they expire'}`,
    { limit: refusal.limit, quota: refusal.quota },
  );
}

/** What the creation takes besides the call: the key, the prepare round's answers, the capabilities to keep. */
export interface Creation {
  key: string | undefined;
  answers: Record<string, JsonObject>;
  capabilities: JsonObject;
  activeLimit: number | undefined;
  storedLimit: number | undefined;
  tenantLimits: NewTask['tenantLimits'];
  storedBytesLimit: number | undefined;
  /** The caller's priority (readCallerPriority). */
  priority: number | undefined;
  /** The trace the task's runs join (traceOfCall). */
  trace: TraceContext | undefined;
  /** The task whose run calls the tool (ctx.callTool; NewTask.parent). */
  parent?: NewTask['parent'];
}

/**
 * The task of a call of `tool` by `owner` as the store takes it (a new id, created now): the tool's policy over the
 * server's defaults, the quotas and the call's creation details.
 */
export function newTaskOf(
  defaults: TaskDefaults,
  policy: TaskPolicy,
  tool: RegisteredTool,
  args: JsonObject,
  auth: AuthInfo,
  creation: Creation,
  createdAt: number,
  id = newTaskId(),
): NewTask {
  const name = tool.def.name;
  const owner = ownerOf(auth);
  const debounce = debounceOf(name, policy.debounce, { args, owner: auth });
  return {
    id,
    owner,
    tool: name,
    ...(tool.def.version === undefined ? {} : { toolVersion: tool.def.version }),
    args,
    createdAt,
    ttlMs:
      policy.ttlMs === undefined
        ? defaults.defaultTtlMs === undefined
          ? 3_600_000
          : defaults.defaultTtlMs
        : policy.ttlMs,
    pollIntervalMs: policy.pollIntervalMs ?? defaults.defaultPollIntervalMs ?? 1_000,
    statusMessage:
      debounce === undefined
        ? 'The task is now in progress.'
        : debouncedMessage(createdAt + debounce.periodMs),
    replayAfterCrash: policy.replayAfterCrash ?? true,
    clientCapabilities: creation.capabilities,
    answers: creation.answers,
    sensitive: policy.sensitive === true,
    idempotencyKey: creation.key,
    activeLimit: creation.activeLimit,
    storedLimit: creation.storedLimit,
    tenantLimits: creation.tenantLimits,
    storedBytesLimit: creation.storedBytesLimit,
    concurrency: concurrencyOf(name, policy.concurrency, { args, owner }),
    rateLimit: rateLimitOf(name, policy.rateLimit, { args, owner }),
    priority: priorityOf(name, policy.priority, { args, owner: auth }, creation.priority),
    ...(debounce === undefined ? {} : { debounce }),
    ...(creation.trace === undefined ? {} : { trace: creation.trace }),
    ...(creation.parent === undefined ? {} : { parent: creation.parent }),
  };
}

/** The quotas of the server's defaults, as creations carry them (NewTask). */
export function quotasOf(
  defaults: TaskDefaults,
): Pick<Creation, 'activeLimit' | 'storedLimit' | 'tenantLimits' | 'storedBytesLimit'> {
  const { maxActive, maxStored = 0 } = defaults;
  return {
    activeLimit: maxActive > 0 ? maxActive : undefined,
    storedLimit: maxStored > 0 ? maxStored : undefined,
    tenantLimits: tenantLimitsOf(defaults),
    storedBytesLimit: defaults.maxStoredBytes,
  };
}

/** Writes the task (or finds the one an earlier call with the same key created) and records which it was. */
async function createTask(
  access: TaskAccess,
  defaults: TaskDefaults,
  policy: TaskPolicy,
  call: ToolCall,
  auth: AuthInfo,
  creation: Creation,
): Promise<{ task: TaskSnapshot; joined: boolean }> {
  const task = newTaskOf(defaults, policy, call.tool, call.args, auth, creation, access.now());
  const { id } = task;
  const snapshot = await access.store.create(task);
  // An earlier call with the same key created the task (before, on another replica, in the same batch).
  const joined = snapshot.id !== id;
  access.audit({
    event: joined ? 'task.joined' : 'task.created',
    ...ownerOf(auth),
    taskId: snapshot.id,
    tool: call.tool.def.name,
    outcome: joined ? 'joined' : 'created',
  });
  return { task: snapshot, joined };
}

/** What a call to a tool with a debounce window is told of the task it got (META_DEBOUNCE); nothing otherwise. */
function debounceNote(
  policy: TaskPolicy,
  task: TaskSnapshot,
  joined: boolean,
): Extract<Started, { task: TaskSnapshot }> {
  if (policy.debounce === undefined) return { task };
  return { task, debounce: { joined, replaced: task.debounced === 'replaced' } };
}

/**
 * A task for this call (or the one an earlier call with the same idempotency key created), or the answer to give
 * instead: the MRTR round of the tool's `prepare`.
 */
export async function startTask(
  access: TaskAccess,
  defaults: TaskDefaults,
  call: ToolCall,
  params: JsonObject,
  scope: RequestScope,
  deps: RoundDeps,
  capabilities?: JsonObject,
): Promise<Started> {
  const policy = call.tool.def.task ?? { support: 'optional' };
  const key = readIdempotencyKey(params);
  const priority = readCallerPriority(params, defaults.allowCallerPriority);
  const earlier = (): Promise<TaskSnapshot | undefined> => earlierTask(access, call, scope.auth, key);
  let answers: Record<string, JsonObject> = {};
  if (policy.prepare !== undefined) {
    // A retried call gets its task before any new MRTR round.
    const found = await earlier();
    if (found !== undefined) return debounceNote(policy, found, true);
    const prepare = policy.prepare;
    const round = await runRound(
      deps,
      params,
      scope,
      call.tool.def.name,
      call.args,
      async (ctx, r) => {
        await prepare(call.args, ctx);
        return r.answers;
      },
      deps.steps,
      call.tool.def.asks,
    );
    if (round.kind === 'input_required') return { answer: round.result };
    answers = round.value;
  }
  const kept = capabilities ?? scope.envelope.clientCapabilities;
  try {
    // The store counts the owner's unfinished tasks with the insert, atomically across processes.
    const { task, joined } = await createTask(access, defaults, policy, call, scope.auth, {
      key,
      answers,
      capabilities: kept,
      ...quotasOf(defaults),
      priority,
      trace: traceOfCall(params, defaults),
    });
    return debounceNote(policy, task, joined);
  } catch (err) {
    if (!(err instanceof ActiveLimitError)) throw err;
    // A retried call is no new task: the quota does not refuse it.
    const found = await earlier();
    if (found !== undefined) return debounceNote(policy, found, true);
    throw overQuota(access, call, scope.auth, err);
  }
}
