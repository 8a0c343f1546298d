// The replay guard of a run (the names it used and the recorded history it must walk first) and the room for new
// records under the task's bound on steps.
import { NonDeterminismError, useStepName } from '../tasks/execution.js';
import { tooManySteps } from '../tasks/limits.js';
import type { ClaimedTask } from '../tasks/task.js';
import type { RunState } from './run-guards.js';

/** Names of the markers ctx.patched keeps among the steps (never a step's own name: see PATCH_PREFIX). */
export const PATCH_PREFIX = '@patched/';

/**
 * The replay guard of a run: the names it used (each once), and the recorded history it must walk before anything
 * new runs. A step or sleep the history does not have, asked while recorded ones are still unvisited, means the code
 * changed under the task: the run diverges (NonDeterminismError) instead of running it.
 */
export function createReplayGuard(task: ClaimedTask, run: RunState) {
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
export function createRoom(task: ClaimedTask, max: number) {
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
