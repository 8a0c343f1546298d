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
