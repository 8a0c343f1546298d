// What a run shows the watchers of its task: ctx.status and ctx.progress as its statusMessage, never behind what
// they were shown. A replay (after input, a wait, a crash, on another process) runs the handler's code between its
// recorded steps again, and with it the status and progress calls there: those were shown by an earlier run.
import type { Clock } from '../tasks/clock.js';
import type { ExecutionContext } from '../tasks/execution.js';
import type { TaskStore } from '../tasks/store.js';
import type { ClaimedTask, TaskProgress } from '../tasks/task.js';
import { PATCH_PREFIX, type RunState } from './steps.js';

export interface ShowDeps {
  store: Pick<TaskStore, 'setStatusMessage'>;
  clock: Clock;
}

/** Where the run stands against its recorded history. */
export interface RunPosition {
  /** Recorded steps remain ahead of the run. */
  replaying(): boolean;
}

type Write = (message: string, progress: TaskProgress | undefined) => Promise<void>;

/**
 * One write at a time, in call order; while one is in flight the calls that follow merge into the next (its message
 * the latest, its progress the latest given), so a tight loop of progress calls costs one write per store round trip.
 * Resolves once the write that carried the call is done; a run that stopped writes nothing more. `written` resolves
 * once every call made so far is written (or dropped, the run stopped).
 */
function createShowQueue(write: Write, stopped: () => boolean) {
  type Waiter = { resolve: () => void; reject: (err: unknown) => void };
  let queued: { message: string; progress?: TaskProgress; waiters: Waiter[] } | undefined;
  let pumping = false;
  let pumped: Promise<void> = Promise.resolve();
  const pump = async (): Promise<void> => {
    pumping = true;
    while (queued !== undefined) {
      const next = queued;
      queued = undefined;
      if (stopped()) {
        for (const w of next.waiters) w.resolve();
        continue;
      }
      await write(next.message, next.progress).then(
        () => next.waiters.forEach((w) => w.resolve()),
        (err: unknown) => next.waiters.forEach((w) => w.reject(err)),
      );
    }
    pumping = false;
  };
  const show = (message: string, progress?: TaskProgress): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const waiter = { resolve, reject };
      if (queued === undefined) queued = { message, progress, waiters: [waiter] };
      else {
        queued.message = message;
        if (progress !== undefined) queued.progress = progress;
        queued.waiters.push(waiter);
      }
      // pump() never rejects: each write's outcome goes to its waiters.
      if (!pumping) pumped = pump();
    });
  return { show, written: (): Promise<void> => pumped };
}

/**
 * Whether the run has caught up with what its task's watchers were shown, so that its progress may be written.
 * While recorded steps remain ahead, the run replays what an earlier run showed: nothing is written. Past them, the
 * progress shown last (kept with the task, so whichever process showed it) still tells how far an earlier run got
 * beyond its last recorded step: the run catches up once its progress reaches that, or once it records a step of its
 * own (it is then past anywhere an earlier run was). A task that never showed progress is caught up from the start.
 */
function createCatchUp(task: ClaimedTask, position: RunPosition) {
  const shown = task.progress;
  const recorded = task.stepOrder.length;
  let caughtUp = shown === undefined;
  const recordedNew = (): boolean =>
    task.stepOrder.slice(recorded).some((name) => !name.startsWith(PATCH_PREFIX));
  return (progress: TaskProgress): boolean => {
    if (caughtUp) return true;
    if (position.replaying()) return false;
    caughtUp = recordedNew() || progress.progress >= (shown as TaskProgress).progress;
    return caughtUp;
  };
}

/** How many step names a status of steps running in parallel lists, and how many characters of each. */
const LISTED_STEPS = 5;
const LISTED_NAME_CHARS = 80;

const quoted = (name: string): string =>
  `"${name.length <= LISTED_NAME_CHARS ? name : `${name.slice(0, LISTED_NAME_CHARS)}…`}"`;

/** `Running steps "a", "b" (2 in parallel).`: what a task whose steps run in parallel says it does. */
export function parallelStepsMessage(names: readonly string[]): string {
  if (names.length === 1) return `Running step ${quoted(names[0] as string)}.`;
  const listed = names.slice(0, LISTED_STEPS).map(quoted).join(', ');
  const more = names.length > LISTED_STEPS ? ` and ${names.length - LISTED_STEPS} more` : '';
  return `Running steps ${listed}${more} (${names.length} in parallel).`;
}

/**
 * The status of steps running in parallel: while more than one new step runs, the statusMessage names them (and,
 * once they are down to one, that one). Changes within one turn of the event loop make one write, through the show
 * queue (which merges those that come while a write is in flight); a run whose steps run one at a time writes
 * nothing and schedules nothing.
 */
function createInFlightStatus(show: (message: string) => Promise<void>, position: RunPosition) {
  let latest: readonly string[] = [];
  let scheduled = false;
  let parallel = false;
  let shown: string | undefined;
  const flush = (): void => {
    scheduled = false;
    if (position.replaying()) return;
    const names = latest;
    if (names.length === 0 || (names.length === 1 && !parallel)) {
      parallel = false;
      return;
    }
    parallel = names.length > 1;
    const message = parallelStepsMessage(names);
    if (message === shown) return;
    shown = message;
    // Best effort: a lost lease or store ends the run by itself.
    show(message).catch(() => undefined);
  };
  return (names: readonly string[]): void => {
    latest = names;
    if (scheduled || (names.length < 2 && !parallel)) return;
    scheduled = true;
    setImmediate(flush);
  };
}

export function createShowing(
  { store, clock }: ShowDeps,
  task: ClaimedTask,
  run: RunState,
  position: RunPosition,
): Pick<ExecutionContext, 'status' | 'progress'> & {
  /** The new steps running now (in the order they started): named in the statusMessage while several run. */
  inFlight(names: readonly string[]): void;
  /**
   * Resolves once what the run showed so far is written (or dropped, the run stopped). The run's ending awaits it:
   * progress shown last, its write queued behind one in flight, would otherwise be refused once the ending has
   * taken the lease, and the ended task would show an earlier one.
   */
  shown(): Promise<void>;
} {
  const write: Write = async (message, progress) => {
    const storeError = run.storeError();
    if (storeError !== undefined) throw storeError;
    // A refused write (false) means the lease is gone: the run stops by itself.
    await store
      .setStatusMessage(task.id, task.token, message, clock.now(), progress)
      .catch((err: unknown) => {
        throw run.onWriteError(err);
      });
  };
  const { show, written } = createShowQueue(write, () => run.signal.aborted);
  const caughtUp = createCatchUp(task, position);
  return {
    status: async (message) => {
      if (!position.replaying()) await show(message);
    },
    progress: (progress, message) => {
      // Best effort: a lost lease or store ends the run by itself.
      if (caughtUp(progress)) show(message, progress).catch(() => undefined);
    },
    inFlight: createInFlightStatus(show, position),
    shown: written,
  };
}
