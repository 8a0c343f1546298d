// Events from outside a task as both stores decide them (OutsideEventPort): what a delivery does to the task's row of
// that event, and what a run's wait finds; each store reads and writes the rows inside one transaction.
import { inAdminScope } from '../../tasks/admin.js';
import {
  eventRefusal,
  MAX_PENDING_EVENTS,
  payloadHash,
  type EventDelivery,
  type EventDeliveryResult,
  type EventWaitState,
} from '../../tasks/events.js';
import { isTerminal, type JsonObject, type JsonValue } from '../../tasks/task.js';
import { sealedAt, type Opener } from '../payload-sealing.js';
import { hasExpired, type Int } from './rows.js';

export type EventState = 'kept' | 'waiting' | 'arrived' | 'read' | 'timed_out';

/** The task a delivery names, as the stores read it. */
export interface EventTask {
  tenant: string;
  principal: string;
  status: string;
  expires_at: Int | null;
}

/** A task's row of one event, opened (payload as JSON text, schema parsed). */
export interface EventRow {
  state: EventState;
  payload: string | null;
  payload_hash: string | null;
  checked: boolean;
  schema: string | null;
  wait_until: Int | null;
}

/** Where an event's payload is kept, bound into its ciphertext when sealed (sealedAt). */
export const eventPayloadAt = (taskId: string, name: string): string =>
  sealedAt('outside_events.payload', taskId, name);

/** A stored row with its payload opened (`open`: the store's opener). */
export function openedEventRow(
  row: EventRow | undefined,
  open: Opener,
  taskId: string,
  name: string,
): EventRow | undefined {
  if (row?.payload === null || row === undefined) return row;
  return { ...row, payload: open(row.payload, eventPayloadAt(taskId, name)) };
}

/** What a delivery writes: a new kept event, the payload handed to the wait (the task woken), or nothing. */
export type DeliveryStep =
  | { write: 'keep'; hash: string }
  | { write: 'arrive'; hash: string; checked: boolean }
  | { write: 'none'; result: EventDeliveryResult };

const refused = (reason: Extract<EventDeliveryResult, { ok: false }>['reason'], name: string) =>
  ({ write: 'none', result: { ok: false, reason, message: eventRefusal(reason, name) } }) as const;

/** Whether the sender may deliver to the task: its owner, an operator of its tenant, or a callback. */
function mayDeliver(d: EventDelivery, task: EventTask): boolean {
  if ('owner' in d.by) return d.by.owner.tenant === task.tenant && d.by.owner.principal === task.principal;
  if ('operator' in d.by) return inAdminScope(d.by.operator, task.tenant);
  return true;
}

/**
 * The step a delivery takes, given the task (undefined: none), its row of the event (undefined: none) and how many
 * events it keeps unwaited for.
 */
export function deliveryStep(
  d: EventDelivery,
  task: EventTask | undefined,
  row: EventRow | undefined,
  kept: () => number,
  now: number,
): DeliveryStep {
  if (task === undefined || !mayDeliver(d, task)) return refused('not_found', d.name);
  const hash = payloadHash(d.json);
  // A repeat is answered as the first delivery was, also once the task has ended (senders retry late).
  if (row?.payload_hash !== null && row?.payload_hash !== undefined)
    return row.payload_hash === hash
      ? { write: 'none', result: { ok: true, outcome: 'repeat' } }
      : refused('conflict', d.name);
  if (isTerminal(task.status) || hasExpired(task.expires_at, now)) return refused('ended', d.name);
  if (row === undefined)
    return kept() >= MAX_PENDING_EVENTS ? refused('too_many', d.name) : { write: 'keep', hash };
  if (row.state === 'timed_out') return refused('timed_out', d.name);
  // The task waits: the payload is checked against the schema it waits with, if any.
  if (row.schema !== null && d.check !== undefined) {
    const problem = d.check(JSON.parse(row.schema) as JsonObject, JSON.parse(d.json) as JsonValue);
    if (problem !== undefined)
      return {
        write: 'none',
        result: { ok: false, reason: 'invalid', message: `${eventRefusal('invalid', d.name)}: ${problem}` },
      };
  }
  return { write: 'arrive', hash, checked: row.schema !== null && d.check !== undefined };
}

/** What a wait writes (`state`: the row's new state, or none) and answers. */
export type WaitStep =
  | { write: 'register'; answer: EventWaitState }
  | { write: 'read'; answer: EventWaitState }
  | { write: 'time_out'; answer: EventWaitState }
  | { write: 'none'; answer: EventWaitState };

/** The step a run's wait takes, given its row of the event (undefined: none yet). */
export function waitStep(row: EventRow | undefined, until: number, now: number): WaitStep {
  if (row === undefined) return { write: 'register', answer: { kind: 'waiting', until } };
  if (row.payload !== null) {
    const answer: EventWaitState = {
      kind: 'received',
      payload: JSON.parse(row.payload) as JsonValue,
      checked: row.checked,
    };
    return { write: row.state === 'read' ? 'none' : 'read', answer };
  }
  if (row.state === 'timed_out') return { write: 'none', answer: { kind: 'timed_out' } };
  const at = row.wait_until === null ? until : Number(row.wait_until);
  if (now >= at) return { write: 'time_out', answer: { kind: 'timed_out' } };
  return { write: 'none', answer: { kind: 'waiting', until: at } };
}
