// The debounce decision both stores make (NewTask.debounce): what a new task does, given the task of its owner and
// tool that holds its debounce key, if any. The key is an idempotency key whose scope ends when its task starts.
import { sameJson } from '../../tasks/json-equal.js';
import type { JsonObject, NewTask, TaskStatus } from '../../tasks/task.js';
import { sealedAt, type Opener } from '../payload-sealing.js';
import { hasExpired, type Int } from './rows.js';

/** The task holding a debounce key, as a store reads it. */
export interface DebounceHolder {
  id: string;
  status: TaskStatus;
  /** Runs so far: 0 until the task is first claimed. */
  attempt: Int;
  /** The end of its window while it waits for it (cleared when it is put in line). */
  wake_at: Int | null;
  expires_at: Int | null;
  /** Its arguments as stored (sealed when the task is). */
  args: string;
}

/**
 * Whether the holder is still pending at `now`: never started, its window open, unfinished and not expired. A claim
 * (or the wait's end putting it in line) clears its wake time and counts an attempt, so a pending task that a
 * statement finds so is one no run has started.
 */
export const isPending = (holder: DebounceHolder, now: number): boolean =>
  holder.status === 'working' &&
  Number(holder.attempt) === 0 &&
  holder.wake_at !== null &&
  Number(holder.wake_at) > now &&
  !hasExpired(holder.expires_at, now);

/**
 * `free`: no task holds the key. `join`: a pending task holds it with equal arguments (compared as JSON).
 * `replace`: a pending task holds it with other arguments and the new task replaces them. `conflict`: the same, not
 * replacing. `take-over`: the holder started, ended or expired, or its window closed: the key is released from it
 * and goes to the new task, which starts a new window.
 */
export type DebounceDecision =
  | { kind: 'free' }
  | { kind: 'join'; id: string }
  | { kind: 'replace'; id: string }
  | { kind: 'conflict'; id: string }
  | { kind: 'take-over'; id: string };

/** What `task` (created at its createdAt, with a debounce key) does with the key `holder` holds. */
export function decideDebounce(
  holder: DebounceHolder | undefined,
  task: NewTask,
  open: Opener,
): DebounceDecision {
  if (holder === undefined) return { kind: 'free' };
  const { id } = holder;
  if (!isPending(holder, task.createdAt)) return { kind: 'take-over', id };
  const held = JSON.parse(open(holder.args, sealedAt('tasks.args', id))) as JsonObject;
  if (sameJson(held, task.args)) return { kind: 'join', id };
  return task.debounce?.replace === true ? { kind: 'replace', id } : { kind: 'conflict', id };
}

/**
 * Whether a claim starts a debounced task's first run (its attempt before the claim: `before`): its window is over,
 * so the status message that named it is cleared by the claim, and its owner's subscribers hear of it.
 */
export const startsDebounced = (row: { debounce_key?: string | null }, before: number): boolean =>
  before === 0 && row.debounce_key != null;
