// Bounded waits for work to wind down: how long a shutdown gives what is still running before it cuts it off.

/** Whether `work` settles (resolved or rejected) within `ms`; the timer never outlives the wait. */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Gives `work` up to `graceMs` to settle; if it has not, calls `abort` and waits for it again: up to `abortedMs`, or
 * for as long as it takes when that is undefined. Says whether it settled.
 */
export async function settleOrAbort(
  work: Promise<unknown>,
  graceMs: number,
  abort: () => void,
  abortedMs?: number,
): Promise<boolean> {
  if (await settlesWithin(work, graceMs)) return true;
  abort();
  if (abortedMs !== undefined) return settlesWithin(work, abortedMs);
  await work.then(
    () => undefined,
    () => undefined,
  );
  return true;
}
