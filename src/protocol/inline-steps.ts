// Steps and sleeps of a handler that runs within its request (no task): attempts and waits happen in process.
import { runAttempt } from '../tasks/attempt.js';
import { systemClock } from '../tasks/clock.js';
import {
  isControlFlow,
  keptStepValue,
  markStepError,
  stepOptionsProblem,
  type StepAttempt,
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

/** `maxBytes`: the largest value a step may return (TaskLimits.maxStepBytes), as a task would keep it. */
export async function runStepInline<T>(
  name: string,
  fn: (attempt: StepAttempt) => T | Promise<T>,
  options: StepOptions,
  signal: AbortSignal,
  maxBytes?: number,
): Promise<T> {
  const problem = stepOptionsProblem(options);
  if (problem !== undefined) throw new TypeError(`step "${name}": ${problem}`);
  const policy = resolveRetryPolicy(options.retry);
  for (let attempt = 1; ; attempt++) {
    try {
      return keptStepValue(
        name,
        await runAttempt(systemClock, name, fn, attempt, options.timeoutMs, signal),
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
