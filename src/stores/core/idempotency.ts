// The idempotency decision both stores make, for a creation and for a lookup alike: what a new task (or a call) with
// an idempotency key does, given the task of its owner and tool that holds the key, if any.
import { IdempotencyConflictError } from '../../tasks/errors.js';
import { sameJson } from '../../tasks/json-equal.js';
import type { JsonObject } from '../../tasks/task.js';
import { sealedAt, type Opener } from '../payload-sealing.js';
import { hasExpired } from './rows.js';

/** The task holding a key, as a store reads it: its id, when it expires (null: never), its arguments as stored. */
export interface KeyHolder {
  id: string;
  expiresAt: number | null;
  /** The arguments as stored (sealed when the task is), opened only when the holder lives. */
  args: string;
}

/**
 * `free`: no task holds the key. `join`: a live task holds it and was created with the same arguments (compared as
 * JSON). `conflict`: a live task holds it with other arguments. `take-over`: the holder has expired, so the key is
 * released from it and goes to the new task.
 */
export type KeyDecision =
  | { kind: 'free' }
  | { kind: 'join'; id: string }
  | { kind: 'conflict'; id: string }
  | { kind: 'take-over'; id: string };

/** What a task created with `args` at `now` does with the key `holder` holds (undefined: none does). */
export function decideKey(
  holder: KeyHolder | undefined,
  args: JsonObject,
  now: number,
  open: Opener,
): KeyDecision {
  if (holder === undefined) return { kind: 'free' };
  const { id } = holder;
  if (hasExpired(holder.expiresAt, now)) return { kind: 'take-over', id };
  const held = JSON.parse(open(holder.args, sealedAt('tasks.args', id))) as JsonObject;
  return sameJson(held, args) ? { kind: 'join', id } : { kind: 'conflict', id };
}

/**
 * The answer to a call whose key a live task holds: that task (`snapshot` reads it; undefined if it has gone since),
 * or IdempotencyConflictError; undefined when the key is free or its holder expired.
 */
export async function joinedTask<S>(
  decision: KeyDecision,
  snapshot: (id: string) => S | undefined | Promise<S | undefined>,
): Promise<S | undefined> {
  if (decision.kind === 'conflict') throw new IdempotencyConflictError(decision.id);
  return decision.kind === 'join' ? snapshot(decision.id) : undefined;
}
