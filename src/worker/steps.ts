// The durable parts of a run's ExecutionContext: memoized steps with retries and timeouts, and durable sleeps.
import type { Clock } from '../tasks/clock.js';
import { ActiveLimitError, StoreUnavailableError } from '../tasks/errors.js';
import {
  errorParts,
  isControlFlow,
  keptStepValue,
  LeaseLostError,
  markStepError,
  NonDeterminismError,
  StepFailedError,
  useStepName,
  WaitPending,
  type ExecutionContext,
  type StepAttempt,
  type StepOptions,
} from '../tasks/execution.js';
import { runAttempt } from '../tasks/attempt.js';
import { DEFAULT_TASK_LIMITS, overStoredBytesQuota, tooManySteps, type TaskLimits } from '../tasks/limits.js';
import { isRetryable, resolveRetryPolicy, retryDelay, type ResolvedRetryPolicy } from '../tasks/retry.js';
import type { SaveStepOptions, TaskStore } from '../tasks/store.js';
import type { ClaimedTask, JsonValue, StepFailure } from '../tasks/task.js';
import { takeStepSlot } from './step-slots.js';

export interface StepDeps {
  store: TaskStore;
  clock: Clock;
  random: () => number;
  /** A failed attempt of `step` (1-based `attempt`) was kept and will be retried. */
  onRetry?: (step: string, attempt: number) => void;
  /** How many records a task may keep, and how large a step's value may be (default DEFAULT_TASK_LIMITS). */
  limits?: Pick<TaskLimits, 'maxStepsPerTask' | 'maxStepBytes'>;
  /** The byte quota of the kept tasks of the task's owner (SaveStepOptions.storedBytesLimit); undefined: none. */
  storedBytesLimit?: number;
}

/** How the run is doing, as the steps need to know it. */
export interface RunState {
  readonly signal: AbortSignal;
  /** The run learnt that its lease is gone: no new step may start. */
  leaseLost(): boolean;
  /** A write of this run failed for want of the store (then thrown by every later step). */
  storeError(): StoreUnavailableError | undefined;
  /** A write was refused: the lease is gone. */
  onLeaseLost(): void;
  /** A write failed: returns the error to throw (and ends the run if the store is unavailable). */
  onWriteError(err: unknown): unknown;
  /** The run must end waiting until `until` (kept even if the handler swallows the WaitPending). */
  requestWait(until: number, statusMessage: string): void;
  /** The wait this run must end with, once one was requested. */
  pendingWait(): { until: number; statusMessage: string } | undefined;
  /** The run left its recorded history: it must end failed with this error (kept even if the handler catches it). */
  diverge(err: NonDeterminismError): void;
  divergence(): NonDeterminismError | undefined;
}

/** Names of the markers ctx.patched keeps among the steps (never a step's own name: see PATCH_PREFIX). */
export const PATCH_PREFIX = '@patched/';

const iso = (t: number): string => new Date(t).toISOString();

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

function toFailure(err: unknown, attempt: number, at: number, final: boolean): StepFailure {
  return { attempt, ...errorParts(err), at, final };
}

/** The value a sleep keeps under its name: when it ends. */
const readWake = (name: string, memo: JsonValue | undefined): number => {
  const wakeAt = typeof memo === 'object' && memo !== null && !Array.isArray(memo) ? memo.wakeAt : undefined;
  if (typeof wakeAt !== 'number')
    throw new Error(`"${name}" names a step, not a sleep: give the sleep its own name`);
  return wakeAt;
};

/** Throws when no new step may start: the lease is gone, the store is away, or the run must end waiting. */
export function guard(task: ClaimedTask, run: RunState): void {
  // A run that knows it lost its lease starts no new step: another worker owns the task now.
  if (run.leaseLost()) throw new LeaseLostError(task.id);
  const diverged = run.divergence();
  if (diverged !== undefined) throw diverged;
  const storeError = run.storeError();
  if (storeError !== undefined) throw storeError;
  // The run is over once it must wait, even if the handler caught the WaitPending: nothing more starts.
  const pending = run.pendingWait();
  if (pending !== undefined) throw new WaitPending(pending.until, pending.statusMessage);
}

/** A fenced write of the run; a refused one means the lease is gone, a failed one may end the run. */
export async function writeOrStop(
  task: ClaimedTask,
  run: RunState,
  save: () => Promise<boolean>,
): Promise<void> {
  let saved: boolean;
  try {
    saved = await save();
  } catch (err) {
    throw run.onWriteError(err);
  }
  if (!saved) {
    run.onLeaseLost();
    throw new LeaseLostError(task.id);
  }
}

/** Ends the run waiting until `until` (kept even if the handler catches the WaitPending). */
export function wait(run: RunState, until: number, statusMessage: string): never {
  run.requestWait(until, statusMessage);
  throw new WaitPending(until, statusMessage);
}

/**
 * The replay guard of a run: the names it used (each once), and the recorded history it must walk before anything
 * new runs. A step or sleep the history does not have, asked while recorded ones are still unvisited, means the code
 * changed under the task: the run diverges (NonDeterminismError) instead of running it.
 */
function createReplayGuard(task: ClaimedTask, run: RunState) {
  const used = new Set<string>();
  // The recorded steps and sleeps in the order they were done (patch markers are decisions, not steps).
  const history = task.stepOrder.filter((n) => !n.startsWith(PATCH_PREFIX));
  return {
    used,
    /** A name this run now uses: a second use is refused. */
    use: (name: string): void => useStepName(used, name),
    /**
     * Before running something new under `name`: throws when recorded steps are still to come. A sleep is no side
     * effect: one the history lacks while recorded steps remain answers false instead (see sleepUntil).
     */
    async checkNew(name: string, sleep = false): Promise<boolean> {
      if (history.length === 0) return true;
      // Calls started together (Promise.all) register their names before any of them runs something new.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const expected = history.find((n) => !used.has(n));
      if (expected === undefined) return true;
      if (sleep) return false;
      const err = new NonDeterminismError(task.tool, task.toolVersion, expected, name);
      run.diverge(err);
      throw err;
    },
    /** Whether recorded steps remain that this run has not reached. */
    replaying: (): boolean => history.some((n) => !used.has(n)),
  };
}

export type ReplayGuard = ReturnType<typeof createReplayGuard>;

/**
 * Room for new records (steps, sleeps, patch decisions) under the task's maxStepsPerTask, counting those in flight
 * (steps started together) so that together they cannot pass it. `take` throws when there is none; the function it
 * returns gives the place back (a kept record then counts in the task's history instead).
 */
function createRoom(task: ClaimedTask, max: number) {
  let inFlight = 0;
  return (what: string): (() => void) => {
    if (task.stepOrder.length + inFlight >= max) throw tooManySteps(what, max);
    inFlight++;
    let held = true;
    return () => {
      if (held) inFlight--;
      held = false;
    };
  };
}

export type Room = ReturnType<typeof createRoom>;

/** ctx.patched: the decision kept with the task, or made now (new code past the recorded history) and kept. */
async function decidePatch(
  task: ClaimedTask,
  run: RunState,
  replay: ReplayGuard,
  keep: Keeper,
  take: Room,
  id: string,
): Promise<boolean> {
  const marker = `${PATCH_PREFIX}${id}`;
  replay.use(marker);
  if (Object.hasOwn(task.steps, marker)) return task.steps[marker] === true;
  guard(task, run);
  const decision = !replay.replaying();
  const what = `ctx.patched("${id}")`;
  const free = take(what);
  try {
    await keep(what, marker, decision);
  } finally {
    free();
  }
  return decision;
}

/**
 * Keeps a step's value (or a sleep's wake-up) under `name`, in the order things are done; `startedAt`: when the
 * step's successful attempt started (operators read its duration). `what` names the record in a refusal: a value that
 * would put the owner over its byte quota is not written, and fails the step, sleep or decision.
 */
function createKeeper({ store, clock, storedBytesLimit }: StepDeps, task: ClaimedTask, run: RunState) {
  return async (what: string, name: string, value: JsonValue, startedAt?: number): Promise<void> => {
    const options: SaveStepOptions | undefined =
      startedAt === undefined && storedBytesLimit === undefined ? undefined : { startedAt, storedBytesLimit };
    await writeOrStop(task, run, () =>
      store.saveStep(task.id, task.token, name, value, clock.now(), options).catch((err: unknown) => {
        throw err instanceof ActiveLimitError ? overStoredBytesQuota(what, err.limit) : err;
      }),
    );
    task.steps[name] = value;
    task.stepOrder.push(name);
  };
}

export type Keeper = ReturnType<typeof createKeeper>;

/** The replay guard, the keeper and the room of a run's records. */
export interface RunRecords {
  replay: ReplayGuard;
  keep: Keeper;
  take: Room;
}

/** What an attempt of a step works with: the run's task and state, and how to keep a value. */
interface AttemptParts {
  deps: StepDeps;
  task: ClaimedTask;
  run: RunState;
  keep: Keeper;
  maxStepBytes: number;
}

/** Attempt `attempt` of a new step; its value kept, or its failure recorded (then retried later or thrown). */
async function attemptStep<T>(
  { deps, task, run, keep, maxStepBytes }: AttemptParts,
  name: string,
  fn: (a: StepAttempt) => T | Promise<T>,
  options: StepOptions,
  policy: ResolvedRetryPolicy,
  attempt: number,
): Promise<T> {
  const { store, clock } = deps;
  let value: JsonValue;
  const body = await holdingSlot(deps, task, run, name, fn, options);
  const startedAt = clock.now();
  try {
    value = keptStepValue(
      name,
      await runAttempt(clock, name, body, attempt, options.timeoutMs, run.signal),
      maxStepBytes,
    );
  } catch (err) {
    // A run that is stopping, and the runtime's own signals, are not failures of the step.
    if (run.signal.aborted || isControlFlow(err) || err instanceof StoreUnavailableError) throw err;
    const retry = isRetryable(policy, err, attempt);
    const failure = toFailure(err, attempt, clock.now(), !retry);
    await writeOrStop(task, run, () =>
      store.saveStepFailure(task.id, task.token, name, failure, clock.now()),
    );
    task.stepAttempts[name] = { failed: attempt, last: failure };
    if (!retry) {
      const thrown = typeof err === 'object' && err !== null ? err : asError(err);
      markStepError(thrown, name, attempt);
      throw thrown;
    }
    deps.onRetry?.(name, attempt);
    const until = clock.now() + retryDelay(policy, attempt, deps.random());
    const of = Number.isFinite(policy.maxAttempts) ? ` of ${policy.maxAttempts}` : '';
    return wait(run, until, `Retrying step "${name}" (attempt ${attempt + 1}${of}) at ${iso(until)}.`);
  }
  guard(task, run);
  await keep(`step "${name}"`, name, value, startedAt);
  return value as T;
}

/**
 * The step's body, holding a slot of its key while it runs (freed when the body settles, even after a timeout moved
 * the step on) when the step has a concurrency limit; a full key ends the run waiting (takeStepSlot).
 */
async function holdingSlot<T>(
  deps: StepDeps,
  task: ClaimedTask,
  run: RunState,
  name: string,
  fn: (a: StepAttempt) => T | Promise<T>,
  options: StepOptions,
): Promise<(a: StepAttempt) => Promise<T>> {
  const limit = options.concurrency;
  if (limit === undefined) return async (a) => fn(a);
  const slot = await takeStepSlot(deps, task, name, limit, run.signal, (err) => run.onWriteError(err));
  if (slot.kind === 'wait') return wait(run, slot.until, slot.statusMessage);
  try {
    guard(task, run);
  } catch (err) {
    await slot.release();
    throw err;
  }
  return async (a) => {
    try {
      return await fn(a);
    } finally {
      await slot.release();
    }
  };
}

/** The steps of a run, and where it stands against its recorded history (worker/progress.ts). */
export type RunSteps = Pick<ExecutionContext, 'step' | 'sleepUntil' | 'patched'> & {
  /** What other records of the run (event waits: event-waits.ts) share with the steps. */
  records: RunRecords;
  /** Recorded steps remain ahead of the run. */
  replaying(): boolean;
};

export function createSteps(deps: StepDeps, task: ClaimedTask, run: RunState): RunSteps {
  const { clock } = deps;
  const { maxStepsPerTask, maxStepBytes } = deps.limits ?? DEFAULT_TASK_LIMITS;
  const replay = createReplayGuard(task, run);
  const keep = createKeeper(deps, task, run);
  const take = createRoom(task, maxStepsPerTask);
  const parts: AttemptParts = { deps, task, run, keep, maxStepBytes };

  return {
    async step(name, fn, options: StepOptions = {}) {
      replay.use(name);
      if (Object.hasOwn(task.steps, name)) return task.steps[name] as never;
      guard(task, run);
      await replay.checkNew(name);
      guard(task, run);
      const policy = resolveRetryPolicy(options.retry);
      const prior = task.stepAttempts[name];
      const failedBefore = prior?.failed ?? 0;
      if (prior !== undefined && (prior.last.final === true || failedBefore >= policy.maxAttempts)) {
        // The step failed for good in an earlier run: replay that failure instead of trying again.
        const err = new StepFailedError(prior.last.name, prior.last.message, prior.last.stack);
        markStepError(err, name, failedBefore);
        throw err;
      }
      // Refused before its body runs: a value that cannot be kept must not have side effects.
      const free = take(`step "${name}"`);
      try {
        return await attemptStep(parts, name, fn, options, policy, failedBefore + 1);
      } finally {
        free();
      }
    },

    async sleepUntil(name, at) {
      replay.use(name);
      let wakeAt: number;
      if (Object.hasOwn(task.steps, name)) wakeAt = readWake(name, task.steps[name]);
      else {
        guard(task, run);
        // Every sleep is kept, one already over too: whether it is over when looked at is a race with the clock
        // (`ctx.sleep(name, 1)`), and a replay must take the path the recorded run took. Releases before did not keep
        // a sleep already over, so a sleep the history lacks while recorded steps remain is one the task went past:
        // it is over, as then (a sleep does nothing a later step depends on, so nothing runs out of order).
        if (!(await replay.checkNew(name, true))) return;
        guard(task, run);
        const what = `sleep "${name}"`;
        const free = take(what);
        try {
          await keep(what, name, { wakeAt: at });
        } finally {
          free();
        }
        wakeAt = at;
      }
      if (clock.now() >= wakeAt) return;
      wait(run, wakeAt, `Sleeping until ${iso(wakeAt)}.`);
    },

    patched: (id) => decidePatch(task, run, replay, keep, take, id),

    records: { replay, keep, take },

    replaying: replay.replaying,
  };
}
