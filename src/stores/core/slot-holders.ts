// The rules both stores apply to holders of concurrency slots other than a task's claim (TaskStore.acquireSlot):
// what a valid holder is, and the key it counts under.
import { concurrencyProblem } from '../../tasks/concurrency.js';
import type { SlotHolder } from '../../tasks/store.js';
import type { PayloadSealing } from '../payload-sealing.js';

/** The longest holder id a store keeps (characters). */
export const MAX_HOLDER_ID_LENGTH = 200;

/** A holder as a store keeps it: its key as kept (a derived key sealed as its tasks' would be), and its bounds. */
export interface KeptHolder {
  id: string;
  key: string;
  limit: number;
  taskId: string | null;
  token: number | null;
  until: number | null;
}

/** The holder as kept; throws a TypeError naming what is wrong with it. */
export function keptHolder(holder: SlotHolder, sealing: PayloadSealing): KeptHolder {
  const { id, slot, run, until } = holder;
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_HOLDER_ID_LENGTH)
    throw new TypeError(`a slot holder's id must be 1 to ${MAX_HOLDER_ID_LENGTH} characters`);
  const problem = concurrencyProblem(slot.limit, slot.key);
  if (problem !== undefined) throw new TypeError(`slot holder: ${problem}`);
  if (run === undefined && !Number.isSafeInteger(until))
    throw new TypeError('a slot holder without a run needs `until`, a time in ms');
  const sealed = sealing.sealsAll || holder.sensitive === true;
  return {
    id,
    key: sealing.concurrencyKey(sealed, slot.key, slot.derived === true),
    limit: slot.limit,
    taskId: run?.taskId ?? null,
    token: run?.token ?? null,
    until: run === undefined ? (until as number) : null,
  };
}
