// Waiting for an AbortSignal with a way to stop waiting: one listener, removed again if the wait ends first.

export const noop = (): void => undefined;

/** Calls `fn` once when `signal` aborts (at once when it has); returns the way to stop waiting. */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  if (signal.aborted) {
    fn();
    return noop;
  }
  signal.addEventListener('abort', fn, { once: true });
  return () => signal.removeEventListener('abort', fn);
}
