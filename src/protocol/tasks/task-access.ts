// What tasks/*, the hand-back and the facade tools share: owner-scoped lookups, answers, cancels and waits, each
// refusal answered the same way whoever asked and recorded in the audit log.
import { isTaskIdShape } from '../../tasks/ids.js';
import type { TaskStore } from '../../tasks/store.js';
import {
  isTerminal,
  LOOKUP_MISS_MESSAGES,
  ownerKey,
  ownerOf,
  type LookupMiss,
  type TaskOwner,
  type TaskSnapshot,
} from '../../tasks/task.js';
import { invalidParams, type ProtocolError } from '../../wire/protocol-error.js';
import type { AuditLog } from '../audit.js';
import { answerRefused, checkAnswer } from '../input-answers.js';
import type { AuthInfo } from '../tool-types.js';
import type { RequestScope } from '../scope.js';
import type { JsonObject } from '../types.js';
import { createRateLimiter } from './rate-limit.js';
import { watchDelay, watchTask } from './task-watch.js';

/** JSON-RPC code for "slow down" answers (outside the reserved range); HTTP 429. */
export const TOO_MANY_REQUESTS = 429;

export interface TaskAccessOptions {
  store: TaskStore;
  now?: () => number;
  audit?: AuditLog;
  /** Per-principal limit on polling (default 100/s with a burst of 200); false disables it. */
  tasksGetRate?: { perSecond: number; burst: number } | false;
}

export interface TaskAccess {
  readonly store: TaskStore;
  readonly now: () => number;
  readonly audit: AuditLog;
  /** Answers a lookup miss the same way whoever asked, and records it. */
  denyTo(auth: AuthInfo, method: string, taskId: string, miss: LookupMiss): ProtocolError;
  /** ms before this principal may poll again (0: now), recorded when it must wait; `at`: now, when known. */
  pollWait(auth: AuthInfo, method: string, taskId: string, at?: number): number;
}

export function createTaskAccess(options: TaskAccessOptions): TaskAccess {
  const { store } = options;
  const now = options.now ?? Date.now;
  const audit: AuditLog = options.audit ?? (() => undefined);
  const rate = options.tasksGetRate === undefined ? { perSecond: 100, burst: 200 } : options.tasksGetRate;
  const getLimiter = rate === false ? undefined : createRateLimiter(rate.perSecond, rate.burst);
  // Most callers are one AuthInfo object per credential (an authenticator's answer): its key is made once (and made
  // again should the object name another owner since).
  const keys = new WeakMap<AuthInfo, { tenant: string; principal: string; key: string }>();
  const keyOf = (auth: AuthInfo): string => {
    const known = keys.get(auth);
    if (known !== undefined && known.tenant === auth.tenant && known.principal === auth.principal)
      return known.key;
    const key = ownerKey(auth);
    keys.set(auth, { tenant: auth.tenant, principal: auth.principal, key });
    return key;
  };
  // Plain closures, not methods: the facade tools are handed them on their own.
  const denyTo = (auth: AuthInfo, method: string, taskId: string, miss: LookupMiss): ProtocolError => {
    audit({ event: 'task.denied', ...ownerOf(auth), method, taskId, outcome: miss });
    return invalidParams(LOOKUP_MISS_MESSAGES[miss]);
  };
  const pollWait = (auth: AuthInfo, method: string, taskId: string, at?: number): number => {
    if (getLimiter === undefined) return 0;
    const wait = getLimiter.take(keyOf(auth), at ?? now());
    if (wait > 0) audit({ event: 'task.limited', ...ownerOf(auth), method, taskId, outcome: 'rate_limited' });
    return wait;
  };
  return { store, now, audit, denyTo, pollWait };
}

/** The lookup miss of this request's method, answered and recorded. */
export const deny = (
  access: TaskAccess,
  scope: RequestScope,
  taskId: string,
  miss: LookupMiss,
): ProtocolError => access.denyTo(scope.auth, scope.method, taskId, miss);

function readTaskId(params: JsonObject): string {
  const id = params.taskId;
  if (typeof id !== 'string') throw invalidParams('Invalid params: taskId must be a string');
  if (!isTaskIdShape(id)) throw invalidParams('invalid task id');
  return id;
}

/** The request's taskId; a malformed one is refused and recorded. */
export function readId(access: TaskAccess, params: JsonObject, scope: RequestScope): string {
  try {
    return readTaskId(params);
  } catch (err) {
    access.audit({
      event: 'task.denied',
      ...ownerOf(scope.auth),
      method: scope.method,
      outcome: 'invalid_id',
    });
    throw err;
  }
}

/**
 * Writes the answers to the task's outstanding keys; returns the keys it ignored (not outstanding). An answer that
 * does not answer its question (checkAnswer) refuses them all with -32602 naming its key and field.
 */
export async function answerInputs(
  access: TaskAccess,
  auth: AuthInfo,
  method: string,
  taskId: string,
  task: TaskSnapshot,
  responses: JsonObject,
): Promise<string[]> {
  const outstanding: Record<string, JsonObject> = {};
  const ignored: string[] = [];
  for (const [key, value] of Object.entries(responses)) {
    if (task.inputRequests[key] === undefined) {
      ignored.push(key);
      continue;
    }
    // One answer that does not answer its question refuses the whole update: nothing is written.
    const check = checkAnswer(task.inputRequests[key], value);
    if (!check.ok) {
      access.audit({ event: 'task.answered', ...ownerOf(auth), method, taskId, outcome: 'refused' });
      throw answerRefused(key, check);
    }
    outstanding[key] = value as JsonObject;
  }
  if (Object.keys(outstanding).length > 0) {
    const answered = await access.store.answer(taskId, ownerOf(auth), outstanding, access.now());
    if (!answered.ok) throw access.denyTo(auth, method, taskId, answered.miss);
    const outcome = answered.resumed ? 'resumed' : 'partial';
    access.audit({ event: 'task.answered', ...ownerOf(auth), taskId, outcome });
  }
  return ignored;
}

export async function cancelTask(
  access: TaskAccess,
  auth: AuthInfo,
  taskId: string,
  method: string,
): Promise<void> {
  const cancelled = await access.store.requestCancel(taskId, ownerOf(auth), access.now());
  if (!cancelled.ok) throw access.denyTo(auth, method, taskId, cancelled.miss);
  const outcome = cancelled.cancelledNow
    ? 'cancelled'
    : cancelled.running
      ? 'cancel_requested'
      : 'already_ended';
  access.audit({ event: 'task.cancel', ...ownerOf(auth), taskId, outcome });
}

/**
 * Watches the task until it ends or waits for input, or until the deadline (or the request's end): the latest
 * snapshot. `onChange` hears every snapshot read on the way.
 */
export async function settleTask(
  access: Pick<TaskAccess, 'store' | 'now'>,
  taskId: string,
  owner: TaskOwner,
  deadline: number,
  signal: AbortSignal,
  onChange?: (task: TaskSnapshot) => void,
): Promise<TaskSnapshot | LookupMiss> {
  const { store, now } = access;
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
