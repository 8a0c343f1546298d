// Events in the testing kit: delivered as the event routes deliver them, and callback URLs of the kit posted to.
import { eventSchemaChecker } from './events/routes.js';
import type { CallbackTokens } from './tasks/callback-tokens.js';
import type { ManualClock } from './tasks/manual-clock.js';
import type { TaskStore } from './tasks/store.js';
import type { JsonValue } from './tasks/task.js';
import {
  eventNameProblem,
  MAX_EVENT_PAYLOAD_BYTES,
  type EventDeliveryResult,
  type EventSender,
} from './tasks/events.js';

/** The origin of the kit's callback URLs (ctx.callbackUrl in the kit). */
export const KIT_PUBLIC_URL = 'http://test-kit.invalid';

export type Send = ReturnType<typeof eventSender>;

/** Delivers events as the routes do: name and payload checked, the payload against its wait's schema. */
export function eventSender(store: TaskStore, clock: ManualClock) {
  const check = eventSchemaChecker();
  return async (
    taskId: string,
    name: string,
    payload: JsonValue,
    by: EventSender,
  ): Promise<EventDeliveryResult> => {
    const problem = eventNameProblem(name);
    if (problem !== undefined) throw new TypeError(`sendEvent: ${problem}`);
    const json = JSON.stringify(payload) as string | undefined;
    if (json === undefined) throw new TypeError('sendEvent: the payload is not JSON');
    if (Buffer.byteLength(json) > MAX_EVENT_PAYLOAD_BYTES)
      throw new RangeError(`sendEvent: an event's payload is at most ${MAX_EVENT_PAYLOAD_BYTES} bytes`);
    const events = store.events;
    if (events === undefined) throw new TypeError('sendEvent: the store keeps no events');
    return events.deliver({ taskId, name, json, by, check }, clock.now());
  };
}

/** POST of a payload to a callback URL of the kit, as `/callbacks/{token}` takes it. */
export async function postCallback(
  send: Send,
  tokens: CallbackTokens,
  clock: ManualClock,
  url: string,
  payload: JsonValue,
): Promise<EventDeliveryResult | { ok: false; reason: 'forged' | 'expired' }> {
  const prefix = `${KIT_PUBLIC_URL}/callbacks/`;
  if (!url.startsWith(prefix)) return { ok: false, reason: 'forged' };
  const checked = tokens.check(url.slice(prefix.length), clock.now());
  if (!checked.ok) return checked;
  return send(checked.taskId, checked.name, payload, { callback: true });
}
