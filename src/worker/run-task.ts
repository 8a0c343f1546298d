// Runs one claimed task: heartbeat, cancellation, memoized steps, and the single fenced write that ends the run.
import { TASK_CRASHED_ERROR, TASK_INTERNAL_ERROR } from '../tasks/errors.js';
import type { Clock } from '../tasks/clock.js';
import { StoreUnavailableError } from '../tasks/errors.js';
import {
  WaitPending,
  type NonDeterminismError,
  type ExecutionContext,
  type TaskRunner,
} from '../tasks/execution.js';
import type { TaskStore } from '../tasks/store.js';
import type { ClaimedTask, RunOutcome } from '../tasks/task.js';
import type { RunInfo, TaskObserver, WaitInfo, WaitKind } from '../tasks/observer.js';
import { createEventWait } from './event-waits.js';
import { createLeaseKeeper, type LeaseKeeper } from './lease-keeper.js';
import { createLiveInput } from './live-input.js';
import { createAppendChunk, type StreamDeps } from './streams.js';
import { createShowing } from './progress.js';
import { createSteps, type RunHooks, type RunState, type StepDeps } from './steps.js';

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
  clock: Clock;
  /** Jitter of retry backoffs (default Math.random). */
  random?: () => number;
  onError?: (err: unknown, taskId: string) => void;
  observer?: TaskObserver;
  /** The run ended waiting (a backoff, a sleep) until this time: the worker wakes then. */
  onWait?: (until: number) => void;
  /** How many records a task may keep and how large a step's value may be (default DEFAULT_TASK_LIMITS). */
  limits?: StepDeps['limits'] & StreamDeps['limits'];
  /** The byte quota of the kept tasks of a task's owner, for its step values (undefined: none). */
  storedBytesLimit?: number;
}

export interface RunningTask {
  readonly id: string;
  abort(reason: AbortReason): void;
  readonly done: Promise<void>;
}

/** Cancel requested before the run, or a crash takeover of a tool that must not re-run: the outcome to end with. */
function outcomeBeforeRunning(task: ClaimedTask): RunOutcome | undefined {
  if (task.cancelRequested) return { kind: 'cancelled' };
  if (task.takenOver && !task.replayAfterCrash) {
    return {
      kind: 'failed',
      error: TASK_CRASHED_ERROR,
      statusMessage: 'The server restarted while this task was running; it is not safe to re-run.',
    };
  }
  return undefined;
}

type Finished = (kind: RunOutcome['kind'], written: boolean) => void;

/** Ends the task without running its tool when it must (see outcomeBeforeRunning); true when it did. */
async function endedBeforeRunning(deps: RunDeps, task: ClaimedTask, finished: Finished): Promise<boolean> {
  const outcome = outcomeBeforeRunning(task);
  if (outcome === undefined) return false;
  let written = false;
  try {
    written = await deps.store.finish(task.id, task.token, outcome, deps.clock.now());
  } catch (err) {
    deps.onError?.(err, task.id);
  }
  finished(outcome.kind, written);
  return true;
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

/** One keeper per worker (per RunDeps): its runs share a heartbeat and a change subscription. */
const keepers = new WeakMap<RunDeps, LeaseKeeper>();

const keeperOf = (deps: RunDeps): LeaseKeeper => {
  let keeper = keepers.get(deps);
  if (keeper === undefined) {
    keeper = createLeaseKeeper(deps.store, Math.max(10, Math.floor(deps.leaseMs / 3)));
    keepers.set(deps, keeper);
  }
  return keeper;
};

/**
 * Renews the lease every third of it; a lost lease or a cancel request aborts the run. A change that says the task
 * is cancelled only makes it renew at once: notifications are hints (on PostgreSQL any database session can send
 * one), and the cancel request read back from the task's row is what stops the run. Returns the stopper.
 */
function keepLease(deps: RunDeps, task: ClaimedTask, abort: (why: AbortReason) => void): () => void {
  const { store, clock } = deps;
  let renewing = false;
  let again = false;
  const renew = (): void => {
    // One renewal at a time: a slow store must not pile them up; a hint during one asks for another after it.
    if (renewing) {
      again = true;
      return;
    }
    renewing = true;
    store
      .renew(task.id, task.token, deps.leaseMs, clock.now())
      .then(
        (r) => {
          if (!r.held) abort('lease-lost');
          else if (r.cancelRequested) abort('cancel');
        },
        () => undefined, // a failed heartbeat is retried; the lease only ends if it stays down
      )
      .finally(() => {
        renewing = false;
        if (again) {
          again = false;
          renew();
        }
      });
  };
  return keeperOf(deps).hold({ taskId: task.id, renew });
}

/** The outcome to write, given how the handler ended and why the run was stopped (if it was). */
function settle(
  outcome: RunOutcome,
  why: AbortReason | undefined,
  wait: RunState['pendingWait'],
  diverged: NonDeterminismError | undefined,
): RunOutcome {
  // A run that left its history ends failed, whatever the handler did after catching that (a cancel still wins).
  if (diverged !== undefined && why !== 'cancel') {
    return {
      kind: 'failed',
      error: { code: TASK_INTERNAL_ERROR.code, message: diverged.message },
      statusMessage: diverged.message,
    };
  }
  // A requested wait ends the run waiting, whatever the handler did after catching it.
  const pending = wait();
  if (pending !== undefined && outcome.kind !== 'cancelled') {
    outcome = { kind: 'waiting', until: pending.until, statusMessage: pending.statusMessage };
  }
  if (why === 'cancel' && outcome.kind !== 'completed') return { kind: 'cancelled' };
  // On shutdown a wait is kept as it is (it is durable); anything else unfinished is handed back.
  if (why === 'shutdown' && outcome.kind !== 'completed' && outcome.kind !== 'waiting')
    return { kind: 'released' };
  return outcome;
}

/** How the handler ended: its outcome, a wait it let through, or an internal failure for anything else it threw. */
async function runHandler(
  deps: RunDeps,
  task: ClaimedTask,
  exec: ExecutionContext,
  storeLost: (err: unknown) => unknown,
): Promise<RunOutcome> {
  try {
    return await deps.runner(task, exec);
  } catch (err) {
    // A runner may let a step's wait through: the run ends waiting, which is no error.
    if (err instanceof WaitPending)
      return { kind: 'waiting', until: err.until, statusMessage: err.statusMessage };
    storeLost(err);
    deps.onError?.(err, task.id);
    return {
      kind: 'failed',
      error: TASK_INTERNAL_ERROR,
      statusMessage: 'The task failed unexpectedly.',
    };
  }
}

/**
 * The ExecutionContext of a run: its steps, what it shows, and live input when the store offers it; `idle` resolves
 * once none of its new steps runs (or the run is stopped).
 */
function createExec(deps: RunDeps, task: ClaimedTask, state: RunState, info: RunInfo) {
  const { store, clock } = deps;
  // The showing reads where the steps stand, and the steps tell it which of them run: one is made before the other.
  let replaying = (): boolean => true;
  const { inFlight, shown, ...showing } = createShowing({ store, clock }, task, state, {
    replaying: () => replaying(),
  });
  const stepDeps: StepDeps = {
    store,
    clock,
    random: deps.random ?? Math.random,
    limits: deps.limits,
    storedBytesLimit: deps.storedBytesLimit,
    onRetry: (step, attempt) => deps.observer?.stepRetried?.(info, step, attempt),
    onInFlight: inFlight,
  };
  const { idle, records, ...steps } = createSteps(stepDeps, task, state);
  replaying = steps.replaying;
  const exec: ExecutionContext = {
    signal: state.signal,
    step: steps.step,
    sleepUntil: steps.sleepUntil,
    patched: steps.patched,
    child: steps.child,
    planSteps: steps.planSteps,
    ...showing,
    now: () => clock.now(),
  };
  const waitForInput = createLiveInput({ store, clock }, task, state);
  if (waitForInput !== undefined) exec.waitForInput = waitForInput;
  const appendChunk = createAppendChunk({ store, clock, limits: deps.limits }, task, state);
  if (appendChunk !== undefined) exec.appendChunk = appendChunk;
  const waitForEvent = createEventWait(stepDeps, task, state, records);
  if (waitForEvent !== undefined) exec.waitForEvent = waitForEvent;
  return { exec, idle: () => idle(state.signal), shown };
}

/** The observer's hooks of steps and waits bound to the run, or undefined when it has none. */
function runHooks(observer: TaskObserver | undefined, run: RunInfo): RunHooks | undefined {
  if (observer === undefined) return undefined;
  const { stepStarted, stepEnded, waitStarted, waitEnded } = observer;
  const steps = stepStarted !== undefined || stepEnded !== undefined;
  const waits = waitStarted !== undefined || waitEnded !== undefined;
  if (!steps && !waits) return undefined;
  return {
    ...(steps
      ? {
          stepStarted: (step) => observer.stepStarted?.(run, step),
          stepEnded: (step, outcome, err) => observer.stepEnded?.(run, step, outcome, err),
        }
      : {}),
    ...(waits
      ? {
          waitStarted: (wait) => observer.waitStarted?.(run, wait),
          waitEnded: (wait, outcome) => observer.waitEnded?.(run, wait, outcome),
        }
      : {}),
  };
}

/**
 * What a run tells its observer: its start (now), its steps and waits (the hooks), the wait it ends with (`waits`,
 * ended with the run) and its end (`finished`).
 */
function observeRun(observer: TaskObserver | undefined, task: ClaimedTask) {
  const info: RunInfo = {
    id: task.id,
    tool: task.tool,
    takenOver: task.takenOver,
    ...(task.trace === undefined ? {} : { trace: task.trace }),
  };
  const started = Date.now();
  observer?.runStarted?.(info);
  const hooks = runHooks(observer, info);
  let parked: WaitInfo | undefined;
  const finished: Finished = (kind, written) => {
    if (parked !== undefined)
      hooks?.waitEnded?.(parked, kind === 'waiting' && written ? 'parked' : 'stopped');
    observer?.runFinished?.(info, kind, Date.now() - started, written);
  };
  const waits = (until: number, kind: WaitKind, name: string | undefined): void => {
    if (hooks?.waitStarted === undefined && hooks?.waitEnded === undefined) return;
    parked = name === undefined ? { kind, until } : { kind, name, until };
    hooks.waitStarted?.(parked);
  };
  return { info, hooks, finished, waits };
}

async function run(
  deps: RunDeps,
  task: ClaimedTask,
  signal: AbortSignal,
  abort: (why: AbortReason) => void,
  reason: () => AbortReason | undefined,
): Promise<void> {
  const { store, clock } = deps;
  const { info, hooks, finished, waits } = observeRun(deps.observer, task);
  if (await endedBeforeRunning(deps, task, finished)) return;
  const stopKeeping = keepLease(deps, task, abort);
  let storeError: StoreUnavailableError | undefined;
  let wait: { until: number; statusMessage: string } | undefined;
  let diverged: NonDeterminismError | undefined;
  /** A store write of this run failed: the run is over, whatever the handler does with the error. */
  const storeLost = (err: unknown): unknown => {
    if (err instanceof StoreUnavailableError) {
      storeError ??= err;
      abort('store-unavailable');
    }
    return err;
  };
  const state: RunState = {
    signal,
    ...(hooks === undefined ? {} : { hooks }),
    leaseLost: () => reason() === 'lease-lost',
    storeError: () => storeError,
    onLeaseLost: () => abort('lease-lost'),
    onWriteError: storeLost,
    requestWait: (until, statusMessage, kind = 'wait', name) => {
      if (wait === undefined) waits(until, kind, name);
      wait ??= { until, statusMessage };
    },
    pendingWait: () => wait,
    diverge: (err) => (diverged ??= err),
    divergence: () => diverged,
  };
  const { exec, idle, shown } = createExec(deps, task, state, info);
  try {
    let outcome = await runHandler(deps, task, exec, storeLost);
    // A run that runs again keeps what the steps still running beside the one that ended it produce.
    if (wait !== undefined || outcome.kind === 'waiting' || outcome.kind === 'input_required') await idle();
    // What the run showed last is written before its ending: after that, its writes are refused.
    await shown();
    const why = reason();
    if (why === 'lease-lost' || why === 'store-unavailable') {
      finished(outcome.kind, false);
      return;
    }
    outcome = settle(outcome, why, () => wait, diverged);
    // Operators learn of it: the code changed under a task in flight.
    if (diverged !== undefined) deps.onError?.(diverged, task.id);
    const written = await store.finish(task.id, task.token, outcome, clock.now());
    finished(outcome.kind, written);
    if (!written) return;
    if (outcome.kind === 'waiting') deps.onWait?.(outcome.until);
    if ((outcome.kind === 'completed' || outcome.kind === 'failed') && outcome.failure !== undefined)
      deps.observer?.toolError?.({ taskId: task.id, tool: task.tool, failure: outcome.failure });
  } catch (err) {
    deps.onError?.(err, task.id);
  } finally {
    stopKeeping();
  }
}
