// How `durable-mcp serve` gets its store when it does not answer at start (a database still starting, a network not
// up yet): it tries again with exponential back-off until the store opens or the process is stopped, logging why.
// A store that answers with a refusal (login, privileges, missing migrations) is a set-up problem: no retry.
import type { Logger } from '../../observability/logger.js';
import type { Backend } from '../../tasks/backend.js';
import { StoreUnavailableError } from '../../tasks/errors.js';
import { backoffCeilingMs, jitteredMs } from '../../pacing/backoff.js';
import { settlesWithin } from '../../pacing/grace.js';

export interface RetryPolicy {
  /** Wait after the first failure; doubled after each next one. */
  readonly firstDelayMs: number;
  /** The longest wait between two attempts. */
  readonly maxDelayMs: number;
  /** While the cause stays the same, a reminder in the log at most this often. */
  readonly remindMs: number;
  /** [0, 1): spreads the waits of replicas that started together. */
  readonly random: () => number;
  readonly now: () => number;
}

export const STORE_RETRY: RetryPolicy = {
  firstDelayMs: 500,
  maxDelayMs: 15_000,
  remindMs: 30_000,
  random: Math.random,
  now: Date.now,
};

/** Whether opening failed because the store did not answer (yet): trying again may succeed. */
export const isUnreachable = (err: unknown): err is StoreUnavailableError =>
  err instanceof StoreUnavailableError && err.unreachable;

/** The wait after failed attempt `n` (from 1): doubling up to the cap, then up to a quarter less at random. */
export function retryDelay(n: number, policy: RetryPolicy = STORE_RETRY): number {
  const base = backoffCeilingMs(n - 1, policy.firstDelayMs, policy.maxDelayMs);
  return Math.round(jitteredMs(base, 0.25, policy.random()));
}

/** A warning per distinct cause, and while it lasts a reminder at most every `remindMs`. */
function causeLog(
  logger: Logger,
  policy: RetryPolicy,
): (err: unknown, attempt: number, retryInMs: number) => void {
  let last: { reason: string; at: number; since: number } | undefined;
  return (err, attempt, retryInMs) => {
    const reason = err instanceof StoreUnavailableError ? err.reason : String(err);
    const now = policy.now();
    if (last?.reason === reason) {
      if (now - last.at < policy.remindMs) return;
      last.at = now;
      const downMs = now - last.since;
      logger.warn(
        { reason, attempt, retryInMs, downMs },
        'still not ready: the store does not answer; retrying',
      );
      return;
    }
    last = { reason, at: now, since: now };
    logger.warn({ reason, attempt, retryInMs }, 'not ready: the store does not answer; retrying');
  };
}

export interface StoreOpening {
  /**
   * The backend once it opened; undefined when stopped first. Rejects with the error of an attempt that failed for
   * another reason than an unreachable store (a refused set-up).
   */
  readonly opened: Promise<Backend | undefined>;
  /** Stops retrying; waits up to `waitMs` for an attempt under way, whose backend (if it opens) is closed. */
  stop(waitMs?: number): Promise<void>;
}

/** Retries `open` after `firstError` (an unreachable store) until it opens, fails otherwise, or is stopped. */
export function retryOpening(
  open: () => Promise<Backend>,
  firstError: unknown,
  logger: Logger,
  policy: RetryPolicy = STORE_RETRY,
): StoreOpening {
  let stopped = false;
  let wake: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  const log = causeLog(logger, policy);
  const started = policy.now();
  const opened = (async (): Promise<Backend | undefined> => {
    let err = firstError;
    for (let n = 1; ; n++) {
      if (!isUnreachable(err)) throw err;
      const delay = retryDelay(n, policy);
      log(err, n, delay);
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, delay);
      });
      if (stopped) return undefined;
      try {
        const backend = await open();
        if (stopped) {
          await backend.close();
          return undefined;
        }
        logger.info({ attempts: n + 1, afterMs: policy.now() - started }, 'ready: the store answers');
        return backend;
      } catch (failure) {
        if (stopped) return undefined;
        err = failure;
      }
    }
  })();
  return {
    opened,
    async stop(waitMs = 2_000) {
      stopped = true;
      clearTimeout(timer);
      wake?.();
      await settlesWithin(opened, waitMs);
    },
  };
}
