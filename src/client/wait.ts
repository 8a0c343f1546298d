// Waits that end early when a signal aborts, and leave no listener behind on it either way: a caller may pass one
// signal to any number of them in turn.

/** Resolves after `ms`, or at once when `signal` aborts (it never rejects; look at `signal.aborted` after it). */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) {
      resolve();
      return;
    }
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * The wait before try number `n` (0 for the first retry) of something that keeps failing: doubling from `baseMs` up
 * to `maxMs`, then a random point in the upper half of that, so that clients turned away together come back apart.
 */
export function backoffMs(
  n: number,
  baseMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** n);
  return ceiling / 2 + (random() * ceiling) / 2;
}
