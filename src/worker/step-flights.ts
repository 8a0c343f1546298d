// The steps of a run that are running now: their bodies told as they start and end, and the steps awaited before a
// run that must run again ends.

/**
 * The new steps of a run that are running: the whole step (its slot wait, attempt and write), awaited by `idle`
 * before a run that must run again ends (a step running beside one that ends the run waiting for its retry keeps
 * its value, so the next run does not run it again); and the bodies running, in the order they started, told to
 * `onBodies` as they start and end.
 */
export function createFlights(onBodies: ((names: readonly string[]) => void) | undefined) {
  let flying = 0;
  const bodies = new Set<string>();
  let idlers: (() => void)[] = [];
  return {
    /** A step started: the function it returns says it ended. */
    start(): () => void {
      flying++;
      let held = true;
      return () => {
        if (!held) return;
        held = false;
        if (--flying > 0) return;
        const waiting = idlers;
        idlers = [];
        for (const resolve of waiting) resolve();
      };
    },
    /** The body of step `name` started: the function it returns says it settled. */
    body(name: string): () => void {
      bodies.add(name);
      onBodies?.([...bodies]);
      return () => {
        if (bodies.delete(name)) onBodies?.([...bodies]);
      };
    },
    /** Resolves once no step runs, or once `signal` fires (a stopped run waits for nothing). */
    idle(signal: AbortSignal): Promise<void> {
      if (flying === 0 || signal.aborted) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = (): void => {
          signal.removeEventListener('abort', done);
          resolve();
        };
        idlers.push(done);
        signal.addEventListener('abort', done, { once: true });
      });
    },
  };
}

export type Flights = ReturnType<typeof createFlights>;
