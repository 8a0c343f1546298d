// Rate limits per key (TaskPolicy.rateLimit): what a valid limit, period and key are, and the rule that spaces the
// starts of a key (GCRA without a burst: one start every periodMs / limit).
import { limitKeyProblem } from './concurrency.js';
import type { RateLimit } from './task.js';

/** The greatest number of starts per period (a store keeps it as a 32-bit integer). */
export const MAX_RATE_LIMIT = 1_000_000;
/** The longest period: a day (a longer one is a quota, not a rate). */
export const MAX_RATE_PERIOD_MS = 86_400_000;

/** Why a limit is refused, or undefined when it is valid. */
export function rateLimitProblem(limit: number, periodMs: number, key: string): string | undefined {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_RATE_LIMIT)
    return `limit must be a whole number from 1 to ${MAX_RATE_LIMIT}`;
  if (!Number.isSafeInteger(periodMs) || periodMs < 1 || periodMs > MAX_RATE_PERIOD_MS)
    return `periodMs must be a whole number of ms from 1 to ${MAX_RATE_PERIOD_MS}`;
  return limitKeyProblem(key);
}

/** A policy's rate limit: its key a name, or a function of the call's arguments and caller. */
export interface RateLimitPolicy<A, O> {
  limit: number;
  periodMs: number;
  key?: string | ((args: A, owner: O) => string);
}

/**
 * The rate limit a task of `tool` carries under its policy (the key defaults to the tool's name; a key function is
 * called with the call's arguments and caller). Throws when a computed key is not a valid key.
 */
export function rateLimitOf<A, O>(
  tool: string,
  policy: RateLimitPolicy<A, O> | undefined,
  call?: { args: A; owner: O },
): RateLimit | undefined {
  if (policy === undefined) return undefined;
  const { limit, periodMs } = policy;
  if (typeof policy.key !== 'function') return { key: policy.key ?? tool, limit, periodMs };
  if (call === undefined) return undefined;
  const key: unknown = policy.key(call.args, call.owner);
  const problem = typeof key === 'string' ? rateLimitProblem(limit, periodMs, key) : 'key must be a string';
  if (problem !== undefined) throw new Error(`tool "${tool}": task.rateLimit: the computed ${problem}`);
  return { key: key as string, limit, periodMs, derived: true };
}

/** Why a policy is refused at registration (its key, when a function, is checked when it is computed). */
export const ratePolicyProblem = <A, O>(tool: string, policy: RateLimitPolicy<A, O>): string | undefined =>
  rateLimitProblem(
    policy.limit,
    policy.periodMs,
    typeof policy.key === 'function' ? 'computed' : (policy.key ?? tool),
  );

/** The time between two starts of a key (ms, fractional): the period shared evenly. */
export const rateInterval = (limit: { limit: number; periodMs: number }): number =>
  limit.periodMs / limit.limit;

/**
 * The GCRA step of one start at `now` under a key whose theoretical arrival time is `tat` (undefined: the key has
 * none, or one in the past): the start is due at the later of the two, and the key's next start one interval after.
 * A start due later than `now` is a reservation: the task waits until then, and starts without another check.
 */
export function reserveStart(
  tat: number | undefined,
  now: number,
  interval: number,
): { startAt: number; tat: number } {
  const startAt = Math.max(tat ?? now, now);
  return { startAt, tat: startAt + interval };
}
