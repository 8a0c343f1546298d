// Events from outside a task (ExecutionContext.waitForEvent): what a delivery may carry, the store's port that keeps
// them, and the bounds on them.
import { createHash } from 'node:crypto';
import type { AdminScope } from './admin.js';
import type { JsonObject, JsonValue, TaskOwner } from './task.js';

/** Events a task may have kept before it waits for them (more are refused: 429). */
export const MAX_PENDING_EVENTS = 32;
/** The largest payload an event may carry, as UTF-8 bytes of its JSON (more is refused: 413). */
export const MAX_EVENT_PAYLOAD_BYTES = 64 * 1024;
/** The longest event name. */
export const MAX_EVENT_NAME = 128;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

/** Why an event name cannot be used (letters, digits, `.`, `_`, `:`, `-`; at most 128), or undefined. */
export function eventNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name.length === 0) return 'an event name is a non-empty string';
  if (name.length > MAX_EVENT_NAME) return `an event name has at most ${MAX_EVENT_NAME} characters`;
  if (!NAME.test(name))
    return 'an event name starts with a letter or digit and holds only letters, digits, ".", "_", ":" and "-"';
  return undefined;
}

/** The digest a repeated delivery is recognised by: the SHA-256 of the payload's JSON text. */
export const payloadHash = (json: string): string => createHash('sha256').update(json, 'utf8').digest('hex');

/**
 * Who delivers: the task's owner (someone else's task is not found), an operator within a tenant scope, or the
 * holder of a signed callback URL (which names the task: no owner to check).
 */
export type EventSender = { owner: TaskOwner } | { operator: AdminScope } | { callback: true };

export interface EventDelivery {
  taskId: string;
  name: string;
  /** The payload's JSON text (at most MAX_EVENT_PAYLOAD_BYTES: the caller checks). */
  json: string;
  by: EventSender;
  /**
   * Checks the payload against the schema the wait registered (when it did): a problem refuses the delivery
   * (`invalid`). Called inside the store's transaction: quick and synchronous.
   */
  check?: (schema: JsonObject, payload: JsonValue) => string | undefined;
}

/**
 * What came of a delivery. `delivered`: the task waited and is woken; `kept`: it did not wait yet, the event waits for
 * it; `repeat`: the same payload came before (nothing changed). Refusals: `not_found` (no such task, or not the
 * sender's), `ended` (the task is finished or expired), `timed_out` (its wait for this event ended without it),
 * `conflict` (another payload came first), `too_many` (MAX_PENDING_EVENTS kept already), `invalid` (fails the wait's
 * schema).
 */
export type EventDeliveryResult =
  | { ok: true; outcome: 'delivered' | 'kept' | 'repeat' }
  | {
      ok: false;
      reason: 'not_found' | 'ended' | 'timed_out' | 'conflict' | 'too_many' | 'invalid';
      message: string;
    };

/**
 * Where a run's wait for an event stands. `received`: the payload (`checked`: against the wait's schema when it came;
 * otherwise the run checks it); `waiting`: none yet, until `until` (the first run's time out); `timed_out`: the wait
 * is over without it.
 */
export type EventWaitState =
  | { kind: 'received'; payload: JsonValue; checked: boolean }
  | { kind: 'waiting'; until: number }
  | { kind: 'timed_out' };

/** The events of tasks (optional store capability; ExecutionContext.waitForEvent needs it). */
export interface OutsideEventPort {
  /**
   * Delivers an event in one write: kept for the task when it does not wait yet, or handed to its wait, which makes
   * the waiting task runnable now (a change of the task: any process's worker claims it). The first accepted payload
   * of a name wins.
   */
  deliver(delivery: EventDelivery, now: number): Promise<EventDeliveryResult>;
  /**
   * The run holding `token` waits for event `name` of its task: a kept or arrived payload is taken (`received`, and
   * never woken for again); otherwise the wait is registered (its `until` and `schema` kept by the first call only)
   * and `waiting` answered, or `timed_out` once `now` reaches its time out (then later deliveries are refused).
   * Undefined when the run no longer holds the task. A run that then ends waiting while a payload arrived for it is
   * woken at once (TaskStore.finish).
   */
  wait(
    id: string,
    token: number,
    name: string,
    wait: { until: number; schema?: JsonObject },
    now: number,
  ): Promise<EventWaitState | undefined>;
}

/** The error code every route that delivers events answers a refused delivery with (HTTP status by the route). */
export const EVENT_REFUSAL_CODES = {
  not_found: 'not_found',
  ended: 'gone',
  timed_out: 'gone',
  conflict: 'conflict',
  too_many: 'too_many_requests',
  invalid: 'invalid',
} as const satisfies Record<Extract<EventDeliveryResult, { ok: false }>['reason'], string>;

/** A refused delivery, as the routes word it. */
export const eventRefusal = (
  reason: Extract<EventDeliveryResult, { ok: false }>['reason'],
  name: string,
): string => {
  switch (reason) {
    case 'not_found':
      return 'Task not found';
    case 'ended':
      return 'The task has ended: it takes no more events';
    case 'timed_out':
      return `The task stopped waiting for event "${name}"`;
    case 'conflict':
      return `Event "${name}" was already delivered with another payload`;
    case 'too_many':
      return `The task keeps ${MAX_PENDING_EVENTS} events it does not wait for yet: no more are taken`;
    case 'invalid':
      return `The payload of event "${name}" does not match the schema the task waits with`;
  }
};
