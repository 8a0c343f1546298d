// The durable parts of a run's ExecutionContext: memoized steps with retries and timeouts, and durable sleeps.
import type { Clock } from '../tasks/clock.js';
import { ActiveLimitError, StoreUnavailableError } from '../tasks/errors.js';
import {
  errorParts,
  isControlFlow,
  keptStepValue,
  markStepError,
  StepFailedError,
  type ExecutionContext,
  type StepAttempt,
  type StepOptions,
} from '../tasks/execution.js';
import { runAttempt } from '../tasks/attempt.js';
import {
  DEFAULT_TASK_LIMITS,
  overStoredBytesQuota,
  tooManyMapItems,
  type TaskLimits,
} from '../tasks/limits.js';
import { isRetryable, resolveRetryPolicy, retryDelay, type ResolvedRetryPolicy } from '../tasks/retry.js';
import type { SaveStepOptions, TaskStore } from '../tasks/store.js';
import type { ClaimedTask, JsonValue, StepFailure } from '../tasks/task.js';
import type { StepEnd, StepInfo } from '../tasks/observer.js';
import { createFlights, type Flights } from './step-flights.js';
import { takeStepSlot } from './step-slots.js';
import { inStepBody } from './step-bodies.js';
import { createChildWaits } from './children.js';
import { guard, guardWrite, wait, writeOrStop, type RunHooks, type RunState } from './run-guards.js';
import { createReplayGuard, createRoom, PATCH_PREFIX, type ReplayGuard, type Room } from './replay-guard.js';

export { guard, PATCH_PREFIX, wait, writeOrStop };
export type { RunHooks, RunState };

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
  /** The step bodies running now changed (in the order they started): worker/progress.ts shows them. */
  onInFlight?: (names: readonly string[]) => void;
}

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
  flights: Flights;
}

/** Attempt `attempt` of a new step; its value kept, or its failure recorded (then retried later or thrown). */
async function attemptStep<T>(
  { deps, task, run, keep, maxStepBytes, flights }: AttemptParts,
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
  const settled = flights.body(name);
  const told = observeAttempt(run.hooks, name, attempt);
  try {
    value = keptStepValue(
      name,
      await runAttempt(
        clock,
        name,
        (a: StepAttempt) => inStepBody(name, attempt, () => body(a)),
        attempt,
        options.timeoutMs,
        run.signal,
      ).finally(settled),
      maxStepBytes,
    );
  } catch (err) {
    // A run that is stopping, and the runtime's own signals, are not failures of the step.
    if (run.signal.aborted || isControlFlow(err) || err instanceof StoreUnavailableError) {
      told?.('stopped');
      throw err;
    }
    const retry = isRetryable(policy, err, attempt);
    told?.(retry ? 'retrying' : 'failed', err);
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
    const message = `Retrying step "${name}" (attempt ${attempt + 1}${of}) at ${iso(until)}.`;
    return wait(run, until, message, 'retry', name);
  }
  try {
    // Kept even when a step beside it ended the run waiting (for its retry): this body ran, the next run must not.
    guardWrite(task, run);
    await keep(`step "${name}"`, name, value, startedAt);
  } catch (err) {
    // A value over the owner's byte quota fails the step; a lost lease or an absent store only stops it.
    const stopped = run.signal.aborted || isControlFlow(err) || err instanceof StoreUnavailableError;
    told?.(stopped ? 'stopped' : 'failed', err);
    throw err;
  }
  told?.('completed');
  return value as T;
}

/** Tells the hooks an attempt started; returns how to tell them it ended (undefined: no hook wants it). */
function observeAttempt(
  hooks: RunHooks | undefined,
  name: string,
  attempt: number,
): ((outcome: StepEnd, err?: unknown) => void) | undefined {
  if (hooks?.stepStarted === undefined && hooks?.stepEnded === undefined) return undefined;
  const step: StepInfo = { name, attempt };
  hooks.stepStarted?.(step);
  return (outcome, err) => hooks.stepEnded?.(step, outcome, err);
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
  if (slot.kind === 'wait') return wait(run, slot.until, slot.statusMessage, 'slot', name);
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

/** ctx.sleepUntil: the wake-up kept under `name` (or the one kept before), and the run ends waiting until then. */
function createSleep(
  { deps, task, run, keep }: AttemptParts,
  replay: ReplayGuard,
  take: Room,
): RunSteps['sleepUntil'] {
  const { clock } = deps;
  return async (name, at) => {
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
    wait(run, wakeAt, `Sleeping until ${iso(wakeAt)}.`, 'sleep', name);
  };
}

/** The steps of a run, and where it stands against its recorded history (worker/progress.ts). */
export type RunSteps = Pick<ExecutionContext, 'step' | 'sleepUntil' | 'patched' | 'child'> &
  Required<Pick<ExecutionContext, 'planSteps'>> & {
    /** What other records of the run (event waits: event-waits.ts) share with the steps. */
    records: RunRecords;
    /** Recorded steps remain ahead of the run. */
    replaying(): boolean;
    /** Resolves once none of the run's new steps is running, or once `signal` fires. */
    idle(signal: AbortSignal): Promise<void>;
  };

export function createSteps(deps: StepDeps, task: ClaimedTask, run: RunState): RunSteps {
  const { clock } = deps;
  const { maxStepsPerTask, maxStepBytes } = deps.limits ?? DEFAULT_TASK_LIMITS;
  const replay = createReplayGuard(task, run);
  const keep = createKeeper(deps, task, run);
  const take = createRoom(task, maxStepsPerTask);
  const flights = createFlights(deps.onInFlight);
  const parts: AttemptParts = { deps, task, run, keep, maxStepBytes, flights };

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
      const landed = flights.start();
      try {
        return await attemptStep(parts, name, fn, options, policy, failedBefore + 1);
      } finally {
        free();
        landed();
      }
    },

    sleepUntil: createSleep(parts, replay, take),

    patched: (id) => decidePatch(task, run, replay, keep, take, id),

    planSteps(what, names) {
      const kept = names.map((name) => Object.hasOwn(task.steps, name));
      const fresh = kept.filter((k) => !k).length;
      if (fresh > 0 && task.stepOrder.length + fresh > maxStepsPerTask)
        throw tooManyMapItems(what, fresh, maxStepsPerTask - task.stepOrder.length, maxStepsPerTask);
      return kept;
    },
    child: createChildWaits({
      store: deps.store,
      clock,
      task,
      run,
      use: replay.use,
      checkNew: (name) => replay.checkNew(name),
      keep,
      take,
    }),
    records: { replay, keep, take },

    replaying: replay.replaying,
    idle: flights.idle,
  };
}
