// Steps and sleeps of a handler that runs within its request (no task): attempts and waits happen in process.
import { runAttempt } from '../tasks/attempt.js';
import { systemClock } from '../tasks/clock.js';
import {
  isControlFlow,
  keptStepValue,
  markStepError,
  stepOptionsProblem,
  type StepAttempt,
  type StepConcurrency,
  type StepOptions,
} from '../tasks/execution.js';
import { isRetryable, resolveRetryPolicy, retryDelay } from '../tasks/retry.js';

/** The longest delay one timer takes (a longer one fires at once): longer waits chain timers. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** Resolves after `ms`, or rejects with the signal's reason once it fires. */
export function sleepInline(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  const end = Date.now() + Math.max(0, ms);
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const stop = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const arm = (): void => {
      const left = end - Date.now();
      if (left <= 0) {
        signal.removeEventListener('abort', stop);
        resolve();
        return;
      }
      timer = setTimeout(arm, Math.min(left, LONGEST_TIMER_MS));
    };
    signal.addEventListener('abort', stop, { once: true });
    arm();
  });
}

/**
 * Takes a slot of a limited step's key (StepOptions.concurrency) for a call that runs within its request, waiting
 * within the call's budget; resolves to the function that frees it, or throws when none freed in time.
 */
export type TakeStepSlot = (
  step: string,
  limit: StepConcurrency,
  signal: AbortSignal,
) => Promise<() => Promise<void>>;

/**
 * `fn` holding a slot of its key while it runs (freed when it settles, even after a timeout moved the step on), when
 * the step has a limit and the server slots; the slot is taken first, so that waiting for it is no attempt.
 */
async function limitedBody<T>(
  name: string,
  fn: (attempt: StepAttempt) => T | Promise<T>,
  limit: StepConcurrency | undefined,
  take: TakeStepSlot | undefined,
  signal: AbortSignal,
): Promise<(attempt: StepAttempt) => Promise<T>> {
  if (limit === undefined || take === undefined) return async (a) => fn(a);
  const release = await take(name, limit, signal);
  return async (a) => {
    try {
      return await fn(a);
    } finally {
      await release();
    }
  };
}

/**
 * `maxBytes`: the largest value a step may return (TaskLimits.maxStepBytes), as a task would keep it; `take`: the
 * slots of limited steps (none: a server without a task store counts nothing).
 */
export async function runStepInline<T>(
  name: string,
  fn: (attempt: StepAttempt) => T | Promise<T>,
  options: StepOptions,
  signal: AbortSignal,
  maxBytes?: number,
  take?: TakeStepSlot,
): Promise<T> {
  const problem = stepOptionsProblem(options);
  if (problem !== undefined) throw new TypeError(`step "${name}": ${problem}`);
  const policy = resolveRetryPolicy(options.retry);
  for (let attempt = 1; ; attempt++) {
    const body = await limitedBody(name, fn, options.concurrency, take, signal);
    try {
      return keptStepValue(
        name,
        await runAttempt(systemClock, name, body, attempt, options.timeoutMs, signal),
        maxBytes,
      ) as T;
    } catch (err) {
      if (signal.aborted || isControlFlow(err)) throw err;
      if (!isRetryable(policy, err, attempt)) {
        markStepError(err, name, attempt);
        throw err;
      }
      await sleepInline(retryDelay(policy, attempt, Math.random()), signal);
    }
  }
}
