// Retry policies of steps: how many attempts, how long to wait between them, which errors are not worth retrying.
import { backoffCeilingMs, jitteredMs } from '../pacing/backoff.js';

export interface RetryPolicy {
  /** Attempts in all, the first included (1: no retry; Infinity: until it succeeds or the task expires). */
  maxAttempts?: number;
  /** Wait before the second attempt. */
  initialDelayMs?: number;
  /** Each later wait is the previous one times this. */
  backoffFactor?: number;
  /** Upper bound of one wait. */
  maxDelayMs?: number;
  /** Fraction (0–1) of each wait drawn at random and taken off it, so that many failing tasks do not retry in step. */
  jitter?: number;
  /** Errors for which it returns true end the step at once (as NonRetryableError does). */
  nonRetryable?: (err: unknown) => boolean;
}

export type ResolvedRetryPolicy = Required<Omit<RetryPolicy, 'nonRetryable'>> &
  Pick<RetryPolicy, 'nonRetryable'>;

/**
 * The built-in default: one attempt, no retry. A step may have side effects that a blind retry repeats, so retrying
 * is asked for (per step, per tool or per server); the backoff figures apply once it is.
 */
export const DEFAULT_RETRY_POLICY: ResolvedRetryPolicy = {
  maxAttempts: 1,
  initialDelayMs: 1_000,
  backoffFactor: 2,
  maxDelayMs: 60_000,
  jitter: 0.2,
};

/** Thrown by a step (or by the code it calls) when retrying cannot help: the step fails at once. */
export class NonRetryableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NonRetryableError';
  }
}

/** Later layers override earlier ones, field by field. */
export function resolveRetryPolicy(...layers: (RetryPolicy | undefined)[]): ResolvedRetryPolicy {
  const out: ResolvedRetryPolicy = { ...DEFAULT_RETRY_POLICY };
  for (const layer of layers) {
    if (layer === undefined) continue;
    for (const [key, value] of Object.entries(layer)) {
      if (value !== undefined) (out as unknown as Record<string, unknown>)[key] = value;
    }
  }
  return out;
}

/** Checks a policy's numbers once, where it is declared; a message naming the field, or undefined. */
export function retryPolicyProblem(policy: RetryPolicy): string | undefined {
  const { maxAttempts, initialDelayMs, backoffFactor, maxDelayMs, jitter } = policy;
  if (
    maxAttempts !== undefined &&
    !((Number.isInteger(maxAttempts) && maxAttempts >= 1) || maxAttempts === Infinity)
  )
    return 'retry.maxAttempts must be an integer of at least 1 (or Infinity)';
  for (const [name, v] of [
    ['initialDelayMs', initialDelayMs],
    ['maxDelayMs', maxDelayMs],
  ] as const) {
    if (v !== undefined && !(Number.isFinite(v) && v >= 0))
      return `retry.${name} must be a number of at least 0`;
  }
  if (backoffFactor !== undefined && !(Number.isFinite(backoffFactor) && backoffFactor >= 1))
    return 'retry.backoffFactor must be a number of at least 1';
  if (jitter !== undefined && !(Number.isFinite(jitter) && jitter >= 0 && jitter <= 1))
    return 'retry.jitter must be a number from 0 to 1';
  return undefined;
}

/** Whether a failed attempt may be followed by another. */
export function isRetryable(policy: ResolvedRetryPolicy, err: unknown, failedAttempts: number): boolean {
  if (failedAttempts >= policy.maxAttempts) return false;
  if (err instanceof NonRetryableError) return false;
  return policy.nonRetryable?.(err) !== true;
}

/**
 * From this many failed attempts on, no wait is shorter than RETRY_FLOOR_MS (or maxDelayMs when that is lower): a
 * step retried without end (maxAttempts Infinity) with no delay (initialDelayMs 0) would otherwise run attempt after
 * attempt back to back, a store write each, for as long as it fails.
 */
export const RETRY_FLOOR_AFTER = 100;
export const RETRY_FLOOR_MS = 1_000;

/**
 * The wait after the `failedAttempts`-th failure (1-based; any count, however large); `random` in [0, 1). The
 * backoff grows from initialDelayMs by backoffFactor up to maxDelayMs: a growth past what a number holds is the cap,
 * never NaN (0 × Infinity). Always a whole number of ms from 0 to maxDelayMs.
 */
export function retryDelay(policy: ResolvedRetryPolicy, failedAttempts: number, random: number): number {
  const { initialDelayMs, backoffFactor, maxDelayMs, jitter } = policy;
  const base = backoffCeilingMs(failedAttempts - 1, initialDelayMs, maxDelayMs, backoffFactor);
  const jittered = Math.round(jitteredMs(base, jitter, random));
  const floor = failedAttempts >= RETRY_FLOOR_AFTER ? Math.min(maxDelayMs, RETRY_FLOOR_MS) : 0;
  return Math.max(jittered, floor);
}
