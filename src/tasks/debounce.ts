// Debounce (TaskPolicy.debounce): what a valid window and key are, and the key a new task carries.
import { concurrencyProblem } from './concurrency.js';
import type { DebounceKey } from './task.js';

/** The longest window (one day): a pending task holds its caller's work back this long at most. */
export const MAX_DEBOUNCE_PERIOD_MS = 86_400_000;

/** A policy's debounce: its key a name, or a function of the call's arguments and caller. */
export interface DebouncePolicy<A, O> {
  key: string | ((args: A, owner: O) => string);
  periodMs: number;
  replace?: boolean;
}

/** Why a key is refused (as a concurrency key is: 1 to 200 printable characters), or undefined. */
const keyProblem = (key: string): string | undefined => concurrencyProblem(1, key);

/** Why a policy is refused at registration (its key, when a function, is checked when it is computed). */
export function debouncePolicyProblem<A, O>(policy: DebouncePolicy<A, O>): string | undefined {
  const { periodMs, replace, key } = policy;
  if (!Number.isSafeInteger(periodMs) || periodMs < 1 || periodMs > MAX_DEBOUNCE_PERIOD_MS)
    return `periodMs must be a whole number of ms from 1 to ${MAX_DEBOUNCE_PERIOD_MS}`;
  if (replace !== undefined && typeof replace !== 'boolean') return 'replace must be a boolean';
  if (typeof key === 'function') return undefined;
  return typeof key === 'string' ? keyProblem(key) : 'key must be a string or a function';
}

/**
 * The debounce key a task of `tool` carries under its policy (a key function is called with the call's arguments and
 * caller). Throws when a computed key is not a valid key.
 */
export function debounceOf<A, O>(
  tool: string,
  policy: DebouncePolicy<A, O> | undefined,
  call: { args: A; owner: O },
): DebounceKey | undefined {
  if (policy === undefined) return undefined;
  const replace = policy.replace === true ? { replace: true } : {};
  if (typeof policy.key !== 'function') return { key: policy.key, periodMs: policy.periodMs, ...replace };
  const key: unknown = policy.key(call.args, call.owner);
  const problem = typeof key === 'string' ? keyProblem(key) : 'key must be a string';
  if (problem !== undefined) throw new Error(`tool "${tool}": task.debounce: the computed ${problem}`);
  return { key: key as string, periodMs: policy.periodMs, derived: true, ...replace };
}

/** The status message of a pending task (created, or its arguments replaced by a later call). */
export const debouncedMessage = (until: number, replaced = false): string =>
  `Debounced until ${new Date(until).toISOString()}: calls with the same debounce key until then join this task.` +
  (replaced ? ' Its arguments were replaced by a later call.' : '');
