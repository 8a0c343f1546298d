// One attempt of a step: its own abort signal (the run's, plus its timeout), and a late result dropped.
import type { Clock } from './clock.js';
import { StepTimeoutError, type StepAttempt } from './execution.js';

export async function runAttempt<T>(
  clock: Clock,
  name: string,
  fn: (a: StepAttempt) => T | Promise<T>,
  attempt: number,
  timeoutMs: number | undefined,
  parent: AbortSignal,
): Promise<T> {
  const controller = new AbortController();
  const stop = (): void => controller.abort(parent.reason);
  if (parent.aborted) stop();
  else parent.addEventListener('abort', stop, { once: true });
  let cancelTimer: (() => void) | undefined;
  try {
    const running = Promise.resolve().then(() => fn({ signal: controller.signal, attempt }));
    if (timeoutMs === undefined) return await running;
    running.catch(() => undefined); // abandoned after a timeout: its rejection goes nowhere
    return await new Promise<T>((resolve, reject) => {
      cancelTimer = clock.setTimer(() => {
        const err = new StepTimeoutError(name, timeoutMs);
        controller.abort(err);
        reject(err);
      }, timeoutMs);
      running.then(resolve, reject);
    });
  } finally {
    cancelTimer?.();
    parent.removeEventListener('abort', stop);
  }
}
