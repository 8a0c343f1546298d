// Tasks waiting for a deployment: a process that cannot run a task of one of its tools (another version of the
// tool's code) and finds it unclaimed for a while marks it, so that its owner is told what it waits for.
import type { ClaimScope, TaskStore } from '../tasks/store.js';

/** How many tasks one pass marks at most (the rest on the next passes). */
const MARK_BATCH = 500;

export interface VersionWaitOptions {
  store: TaskStore;
  /** The tasks this worker may claim; undefined: any (then nothing is left out, and nothing marked). */
  scope?: () => ClaimScope | undefined;
  /** How long a task goes unclaimed before it is marked, and how often this process looks (at most). */
  versionWaitMs: number;
  onError?: (err: unknown) => void;
}

/**
 * One pass of the sweep: at most once per `versionWaitMs`, marks the runnable tasks of this process's tools that its
 * scope leaves out and that no process has held for `versionWaitMs` (any process that can run them would have
 * claimed them by then). A process that can run one later claims it, and the mark is gone with that claim.
 */
export function versionWaitMarker(options: VersionWaitOptions, now: () => number): () => Promise<void> {
  let last = Number.NEGATIVE_INFINITY;
  return async () => {
    const scope = options.scope?.();
    const mark = options.store.markVersionWaits?.bind(options.store);
    if (scope === undefined || mark === undefined || now() - last < options.versionWaitMs) return;
    last = now();
    try {
      await mark(scope, last, last - options.versionWaitMs, MARK_BATCH);
    } catch (err) {
      options.onError?.(err);
    }
  };
}
