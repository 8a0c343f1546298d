// Runs one claimed task: heartbeat, cancellation, memoized steps, and the single fenced write that ends the run.
import { StoreUnavailableError } from '../tasks/errors.js';
import { LeaseLostError, type ExecutionContext, type TaskRunner } from '../tasks/execution.js';
import type { TaskStore } from '../tasks/store.js';
import type { ClaimedTask, RunOutcome } from '../tasks/task.js';
import type { TaskObserver } from '../tasks/observer.js';

/**
 * Why a run stops early. `store-unavailable`: a write of the run failed for want of the store; like a lost lease
 * it ends the run without another write, and the task runs again (replaying its memoized steps) once the lease
 * expires.
 */
export type AbortReason = 'cancel' | 'lease-lost' | 'store-unavailable' | 'shutdown';

export interface RunDeps {
  store: TaskStore;
  runner: TaskRunner;
  leaseMs: number;
  now: () => number;
  onError?: (err: unknown, taskId: string) => void;
  observer?: TaskObserver;
}

export interface RunningTask {
  readonly id: string;
  abort(reason: AbortReason): void;
  readonly done: Promise<void>;
}

const CRASH_ERROR = { code: -32603, message: 'server restarted while the task was running' };

/** Cancel requested before the run, or a crash takeover of a tool that must not re-run: end without running. */
async function endsBeforeRunning(deps: RunDeps, task: ClaimedTask): Promise<boolean> {
  const { store, now } = deps;
  if (task.cancelRequested) {
    await store.finish(task.id, task.token, { kind: 'cancelled' }, now());
    return true;
  }
  if (task.takenOver && !task.replayAfterCrash) {
    const outcome: RunOutcome = {
      kind: 'failed',
      error: CRASH_ERROR,
      statusMessage: 'The server restarted while this task was running; it is not safe to re-run.',
    };
    await store.finish(task.id, task.token, outcome, now());
    return true;
  }
  return false;
}

export function startRun(deps: RunDeps, task: ClaimedTask): RunningTask {
  const controller = new AbortController();
  let reason: AbortReason | undefined;
  const abort = (why: AbortReason): void => {
    if (reason !== undefined) return;
    reason = why;
    controller.abort(why);
  };
  const done = run(deps, task, controller.signal, abort, () => reason);
  return { id: task.id, abort, done };
}

async function run(
  deps: RunDeps,
  task: ClaimedTask,
  signal: AbortSignal,
  abort: (why: AbortReason) => void,
  reason: () => AbortReason | undefined,
): Promise<void> {
  const { store, now } = deps;
  try {
    if (await endsBeforeRunning(deps, task)) return;
  } catch (err) {
    deps.onError?.(err, task.id);
    return;
  }
  const info = { id: task.id, tool: task.tool, takenOver: task.takenOver };
  const started = Date.now();
  deps.observer?.runStarted?.(info);
  let renewing = false;
  const heartbeat = setInterval(
    () => {
      // One renewal at a time: a slow store must not pile them up.
      if (renewing) return;
      renewing = true;
      store
        .renew(task.id, task.token, deps.leaseMs, now())
        .then(
          (r) => {
            if (!r.held) abort('lease-lost');
            else if (r.cancelRequested) abort('cancel');
          },
          () => undefined, // a failed heartbeat is retried; the lease only ends if it stays down
        )
        .finally(() => (renewing = false));
    },
    Math.max(10, Math.floor(deps.leaseMs / 3)),
  );
  const unsubscribe = store.changes?.subscribe((c) => {
    if (c.taskId === task.id && c.cancelRequested) abort('cancel');
  });
  let storeError: StoreUnavailableError | undefined;
  /** A store write of this run failed: the run is over, whatever the handler does with the error. */
  const storeLost = (err: unknown): unknown => {
    if (err instanceof StoreUnavailableError) {
      storeError ??= err;
      abort('store-unavailable');
    }
    return err;
  };
  const exec: ExecutionContext = {
    signal,
    async step(name, fn) {
      if (Object.hasOwn(task.steps, name)) return task.steps[name] as never;
      // A run that knows it lost its lease starts no new step: another worker owns the task now.
      if (reason() === 'lease-lost') throw new LeaseLostError(task.id);
      if (storeError !== undefined) throw storeError;
      const value = await fn();
      let saved: boolean;
      try {
        saved = await store.saveStep(task.id, task.token, name, value, now());
      } catch (err) {
        throw storeLost(err);
      }
      if (!saved) {
        abort('lease-lost');
        throw new LeaseLostError(task.id);
      }
      task.steps[name] = value;
      return value;
    },
    async status(message) {
      if (storeError !== undefined) throw storeError;
      await store.setStatusMessage(task.id, task.token, message, now()).catch((err: unknown) => {
        throw storeLost(err);
      });
    },
  };
  try {
    let outcome: RunOutcome;
    try {
      outcome = await deps.runner(task, exec);
    } catch (err) {
      storeLost(err);
      deps.onError?.(err, task.id);
      outcome = {
        kind: 'failed',
        error: { code: -32603, message: 'Internal error' },
        statusMessage: 'The task failed unexpectedly.',
      };
    }
    const why = reason();
    if (why === 'lease-lost' || why === 'store-unavailable') {
      deps.observer?.runFinished?.(info, outcome.kind, Date.now() - started, false);
      return;
    }
    if (why === 'cancel' && outcome.kind !== 'completed') outcome = { kind: 'cancelled' };
    if (why === 'shutdown' && outcome.kind !== 'completed') outcome = { kind: 'released' };
    const written = await store.finish(task.id, task.token, outcome, now());
    deps.observer?.runFinished?.(info, outcome.kind, Date.now() - started, written);
  } catch (err) {
    deps.onError?.(err, task.id);
  } finally {
    clearInterval(heartbeat);
    unsubscribe?.();
  }
}
