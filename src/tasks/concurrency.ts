// Concurrency limits per key (TaskPolicy.concurrency): what a valid limit and key are.
import type { ConcurrencyLimit } from './task.js';

/** The longest key a limit may name (characters). */
export const MAX_CONCURRENCY_KEY_LENGTH = 200;

/** The greatest limit (a store keeps it as a 32-bit integer; far beyond any worker count). */
export const MAX_CONCURRENCY_LIMIT = 1_000_000;

/** Printable characters only: the key is shown in status messages and operators' views. */
const PRINTABLE = /^[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+$/u;

/** Why a key of a limit (a concurrency or a rate limit) is refused, or undefined when it is valid. */
export const limitKeyProblem = (key: string): string | undefined =>
  key.length === 0 || key.length > MAX_CONCURRENCY_KEY_LENGTH || !PRINTABLE.test(key)
    ? `key must be 1 to ${MAX_CONCURRENCY_KEY_LENGTH} printable characters`
    : undefined;

/** Why a limit is refused, or undefined when it is valid. */
export function concurrencyProblem(limit: number, key: string): string | undefined {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_CONCURRENCY_LIMIT)
    return `limit must be a whole number from 1 to ${MAX_CONCURRENCY_LIMIT}`;
  return limitKeyProblem(key);
}

/** A policy's limit: its key a name, or a function of the call's arguments and caller. */
export interface ConcurrencyPolicy<A, O> {
  limit: number;
  key?: string | ((args: A, owner: O) => string);
  /** How long a task holds its slot: while a run executes ('run', the default) or until the task ends ('task'). */
  hold?: 'run' | 'task';
}

/**
 * The limit a task of `tool` carries under its policy (the key defaults to the tool's name; a key function is called
 * with the call's arguments and caller). Throws when a computed key is not a valid key.
 */
export function concurrencyOf<A, O>(
  tool: string,
  policy: ConcurrencyPolicy<A, O> | undefined,
  call?: { args: A; owner: O },
): ConcurrencyLimit | undefined {
  if (policy === undefined) return undefined;
  const hold = policy.hold === 'task' ? { hold: 'task' as const } : {};
  if (typeof policy.key !== 'function') return { key: policy.key ?? tool, limit: policy.limit, ...hold };
  if (call === undefined) return undefined;
  const key: unknown = policy.key(call.args, call.owner);
  const problem = typeof key === 'string' ? concurrencyProblem(policy.limit, key) : 'key must be a string';
  if (problem !== undefined) throw new Error(`tool "${tool}": task.concurrency: the computed ${problem}`);
  return { key: key as string, limit: policy.limit, derived: true, ...hold };
}

/** Why a policy is refused at registration (its key, when a function, is checked when it is computed). */
export const policyProblem = <A, O>(tool: string, policy: ConcurrencyPolicy<A, O>): string | undefined =>
  policy.hold !== undefined && policy.hold !== 'run' && policy.hold !== 'task'
    ? `hold must be 'run' or 'task'`
    : concurrencyProblem(policy.limit, typeof policy.key === 'function' ? 'computed' : (policy.key ?? tool));
