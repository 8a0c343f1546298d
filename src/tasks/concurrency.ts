// Concurrency limits per key (TaskPolicy.concurrency): what a valid limit and key are.
import type { ConcurrencyLimit } from './task.js';

/** The longest key a limit may name (characters). */
export const MAX_CONCURRENCY_KEY_LENGTH = 200;

/** The greatest limit (a store keeps it as a 32-bit integer; far beyond any worker count). */
export const MAX_CONCURRENCY_LIMIT = 1_000_000;

/** Printable characters only: the key is shown in status messages and operators' views. */
const PRINTABLE = /^[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+$/u;

/** Why a limit is refused, or undefined when it is valid. */
export function concurrencyProblem(limit: number, key: string): string | undefined {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_CONCURRENCY_LIMIT)
    return `limit must be a whole number from 1 to ${MAX_CONCURRENCY_LIMIT}`;
  if (key.length === 0 || key.length > MAX_CONCURRENCY_KEY_LENGTH || !PRINTABLE.test(key))
    return `key must be 1 to ${MAX_CONCURRENCY_KEY_LENGTH} printable characters`;
  return undefined;
}

/** The limit a task of `tool` carries under its policy (the key defaults to the tool's name). */
export const concurrencyOf = (
  tool: string,
  policy: { limit: number; key?: string } | undefined,
): ConcurrencyLimit | undefined =>
  policy === undefined ? undefined : { key: policy.key ?? tool, limit: policy.limit };
