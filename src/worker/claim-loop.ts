// A worker's claims: runnable tasks up to its free slots (in one write where the store can), one claim at a time,
// paused with a doubling backoff while the store is away.
import { performance } from 'node:perf_hooks';
import type { ClaimScope, TaskStore } from '../tasks/store.js';
import type { ClaimedTask } from '../tasks/task.js';
import { backoffCeilingMs, jitteredMs } from '../pacing/backoff.js';

const MAX_CLAIM_BACKOFF_MS = 5_000;

export interface ClaimLoopDeps {
  store: TaskStore;
  workerId: string;
  leaseMs: number;
  concurrency: number;
  /** The backstop poll interval: also the first pause after a failed claim. */
  pollMs: number;
  now(): number;
  /** How many runs are going. */
  active(): number;
  stopped(): boolean;
  /** Runs a claimed task. */
  start(task: ClaimedTask): void;
  onError?: (err: unknown) => void;
  /** The tasks this worker may claim; undefined: any. */
  scope?: () => ClaimScope | undefined;
}

export interface ClaimLoop {
  /** Claims while slots are free; asked again while claiming, it claims once more after. */
  fill(): Promise<void>;
  /** Whether claims pause for an unreachable store. */
  paused(): boolean;
  /** Resolves once no claim is in flight. */
  idle(): Promise<void>;
}

export function createClaimLoop(deps: ClaimLoopDeps): ClaimLoop {
  const { store, workerId, leaseMs, concurrency } = deps;
  let claiming = false;
  let again = false;
  // After a failed claim (store away), claims pause for a backoff that doubles up to MAX_CLAIM_BACKOFF_MS. Measured
  // on the monotonic clock: a jump of the wall clock must not stretch or skip it.
  let claimFailures = 0;
  let claimPausedUntil = 0;

  const fill = async (): Promise<void> => {
    if (claiming) {
      again = true;
      return;
    }
    if (performance.now() < claimPausedUntil) return;
    claiming = true;
    try {
      do {
        again = false;
        while (!deps.stopped() && deps.active() < concurrency) {
          const free = concurrency - deps.active();
          const scope = deps.scope?.();
          const tasks =
            store.claimBatch !== undefined && free > 1
              ? await store.claimBatch(workerId, leaseMs, deps.now(), free, scope)
              : [await store.claim(workerId, leaseMs, deps.now(), scope)].filter((t) => t !== undefined);
          if (tasks.length === 0) break;
          if (deps.stopped()) {
            // stop() came while this claim was in flight: hand the tasks straight back.
            for (const task of tasks)
              await store.finish(task.id, task.token, { kind: 'released' }, deps.now());
            break;
          }
          for (const task of tasks) deps.start(task);
          if (tasks.length < free) break;
        }
      } while (again && !deps.stopped());
      claimFailures = 0;
    } catch (err) {
      const ceiling = backoffCeilingMs(claimFailures++, deps.pollMs, MAX_CLAIM_BACKOFF_MS);
      claimPausedUntil = performance.now() + jitteredMs(ceiling, 0.25, Math.random());
      deps.onError?.(err);
    } finally {
      claiming = false;
    }
  };

  return {
    fill,
    paused: () => performance.now() < claimPausedUntil,
    async idle() {
      while (claiming) await new Promise((r) => setTimeout(r, 5));
    },
  };
}
