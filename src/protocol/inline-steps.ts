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

/** Resolves after `ms`, or rejects with the signal's reason once it fires. */
export function sleepInline(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise((resolve, reject) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
    };
    const stop = (): void => {
      done();
      reject(signal.reason as Error);
    };
    const timer = setTimeout(
      () => {
        done();
        resolve();
      },
      Math.max(0, ms),
    );
    signal.addEventListener('abort', stop, { once: true });
  });
}

export async function runStepInline<T>(
  name: string,
  fn: (attempt: StepAttempt) => T | Promise<T>,
  options: StepOptions,
  signal: AbortSignal,
): Promise<T> {
  const problem = stepOptionsProblem(options);
  if (problem !== undefined) throw new TypeError(`step "${name}": ${problem}`);
  const policy = resolveRetryPolicy(options.retry);
  for (let attempt = 1; ; attempt++) {
    try {
      return keptStepValue(
        name,
        await runAttempt(systemClock, name, fn, attempt, options.timeoutMs, signal),
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
