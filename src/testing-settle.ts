// The testing kit's settle (durable-mcp/testing): runs what can run, one run at a time (or as many as the kit's
// concurrency), and sees runs that wait on nothing but the manual clock (a step's timeoutMs, a timer of kit.clock):
// settle then fails saying so, or, asked to, moves the clock to the next timer and goes on.
import type { TaskRunner } from './tasks/execution.js';
import type { ManualClock } from './tasks/manual-clock.js';
import type { TaskStore } from './tasks/store.js';
import type { ClaimedTask } from './tasks/task.js';
import { enterRun, runKey, type Crashes } from './testing-store.js';
import type { RunWatch } from './testing-watch.js';
import { startRun, type RunDeps, type RunningTask } from './worker/run-task.js';

const iso = (t: number): string => new Date(t).toISOString();

/**
 * Thrown by `settle()` when a run in flight waits on nothing but the kit's manual clock (a step attempt's
 * `timeoutMs`, a timer set on `kit.clock`): it would wait for ever, as that clock moves only when the test moves it.
 * The run stays in flight: `kit.advance(ms)` fires its timer and the next settle goes on with it.
 */
export class BlockedOnClockError extends Error {
  constructor(
    /** The clock's time (epoch ms). */
    readonly now: number,
    /** When the clock's next timer falls due (epoch ms). */
    readonly nextTimerAt: number,
  ) {
    super(
      `settle: blocked on the manual clock at ${iso(now)} (next timer at ${iso(nextTimerAt)}): a run waits on ` +
        `nothing but the kit's clock (a step's timeoutMs, or a timer of kit.clock); move it with kit.advance(ms), ` +
        `or call settle({ advance: true })`,
    );
    this.name = 'BlockedOnClockError';
  }
}

export interface SettleOptions {
  /**
   * Moves the clock to its next timer, firing it, each time nothing can run (a run in flight waits on the clock, or
   * every task waits for a time: a sleep, a retry backoff): settles through step timeouts, sleeps and backoffs.
   * Tasks waiting for input, and the lease of a crashed run (see `recover`), stay as they are.
   */
  advance?: boolean;
  /** With `advance`: at most this many moves of the clock (default 1,000); settle fails past it. */
  maxAdvances?: number;
}

/** What settle works with: the kit's parts. */
export interface SettleParts {
  store: TaskStore;
  runner: TaskRunner;
  crashes: Crashes;
  clock: ManualClock;
  leaseMs: number;
  /** Records per task and bytes per step value of the runs, and the byte quota of their owner. */
  limits: RunDeps['limits'];
  storedBytesLimit: number | undefined;
  watch: RunWatch;
  /** Runs in flight (up to `width`, or more when runs an earlier settle left waiting on the clock). */
  flights: Set<Flight>;
  /** How many runs settle keeps in flight at once, as a worker's concurrency (the kit's `concurrency`). */
  width: number;
}

interface Flight {
  readonly handle: RunningTask;
  ended: boolean;
  readonly done: Promise<void>;
}

/** Starts a claimed task's run, its code watched (what it holds open) and its crash armed if one is. */
function launch(parts: SettleParts, task: ClaimedTask): Flight {
  const { store, runner, crashes, clock, leaseMs, limits, storedBytesLimit, watch, flights } = parts;
  const run = enterRun(crashes, task);
  const watched: TaskRunner = (t, exec) => watch.within(() => runner(t, exec));
  const handle = startRun(
    { store, runner: watched, leaseMs, clock, limits, storedBytesLimit, random: () => 0.5 },
    task,
  );
  run.handle = handle;
  const end = (): void => {
    flight.ended = true;
    flights.delete(flight);
    crashes.runs.delete(runKey(task.id, task.token));
  };
  const flight: Flight = { handle, ended: false, done: handle.done.then(end, end) };
  flights.add(flight);
  return flight;
}

type State = 'ended' | 'busy' | 'clock' | 'idle';

/**
 * Where the runs are: one of them ended, some code holds something open, or they wait on promises alone with (or
 * without) a clock timer.
 */
async function stateOf({ watch, clock }: SettleParts, runs: readonly Flight[]): Promise<State> {
  const ended = (): boolean => runs.some((f) => f.ended);
  if (ended()) return 'ended';
  if (watch.busy()) return 'busy';
  // What is due this turn (the callbacks of resources just closed) runs first.
  await new Promise<void>((resolve) => setImmediate(resolve));
  if (ended()) return 'ended';
  if (watch.busy()) return 'busy';
  return clock.next() === undefined ? 'idle' : 'clock';
}

/**
 * Waits until one of the runs ends (true), or until they wait on nothing but the manual clock (false). Runs that
 * wait on promises alone with no clock timer pending are waited for: something outside their code may settle them.
 */
async function landed(parts: SettleParts, runs: readonly Flight[]): Promise<boolean> {
  // Each turn waits for an event: a run ended, let go of what it held, or set a timer on the clock.
  for (;;) {
    const state = await stateOf(parts, runs);
    if (state === 'ended') return true;
    if (state === 'clock') return false;
    await Promise.race([...runs.map((f) => f.done), parts.watch.changed()]);
  }
}

/** Moves the clock to `at` (firing the timers on the way), counting the move against settle's budget. */
type Mover = (at: number) => void;

function moverOf(clock: ManualClock, max: number): Mover {
  let moves = 0;
  return (at) => {
    if (moves++ >= max)
      throw new Error(
        `settle: not settled after ${max} clock advances (at ${iso(clock.now())}, next timer at ${iso(at)}): ` +
          `a tool that sleeps or retries in a loop may never settle; raise maxAdvances, or move the clock with ` +
          `kit.advance(ms)`,
      );
    clock.advance(Math.max(0, at - clock.now()));
  };
}

/** Waits for one of the runs to end; runs blocked on the clock fail settle, or move the clock (`move`). */
async function finish(parts: SettleParts, runs: readonly Flight[], move: Mover | undefined): Promise<void> {
  while (!(await landed(parts, runs))) {
    const at = parts.clock.next() as number; // landed saw a timer pending
    if (move === undefined) throw new BlockedOnClockError(parts.clock.now(), at);
    move(at);
  }
}

/** The next time anything waits for: a task's wake-up in the store, or a timer of the clock. */
async function nextTime({ store, clock }: SettleParts): Promise<number | undefined> {
  const times = [await store.nextWakeAt?.(clock.now()), clock.next()].filter((t) => t !== undefined);
  return times.length === 0 ? undefined : Math.min(...times);
}

/**
 * What the worker's sweep does: tasks past their TTL end, and the slots of concurrency keys that no run holds any
 * longer (a lapsed lease, a holder cancelled or expired while it did not run) let the tasks parked for them run.
 */
async function sweep({ store, clock }: SettleParts): Promise<void> {
  await store.expire(clock.now());
  await store.freeSlots?.(clock.now());
}

/** Claims until `width` runs are in flight or nothing more can run now; how many it started. */
async function fill(parts: SettleParts): Promise<number> {
  let started = 0;
  while (parts.flights.size < parts.width) {
    const task = await parts.store.claim('test-kit', parts.leaseMs, parts.clock.now());
    if (task === undefined) break;
    launch(parts, task);
    started += 1;
  }
  return started;
}

/**
 * Runs every task that can run now, up to `width` runs at once (one at a time by default), moving the clock as
 * `options.advance` says.
 */
export async function settleAll(parts: SettleParts, options: SettleOptions = {}): Promise<void> {
  const { maxAdvances = 1_000 } = options;
  if (!(Number.isInteger(maxAdvances) && maxAdvances >= 0))
    throw new RangeError('settle: maxAdvances must be an integer >= 0');
  const move = options.advance === true ? moverOf(parts.clock, maxAdvances) : undefined;
  // Runs an earlier settle left waiting on the clock go first.
  for (const flight of [...parts.flights]) await finish(parts, [flight], move);
  await sweep(parts);
  for (let runs = 0; runs < 10_000;) {
    runs += await fill(parts);
    if (parts.flights.size > 0) {
      await finish(parts, [...parts.flights], move);
      continue;
    }
    const at = move === undefined ? undefined : await nextTime(parts);
    if (move === undefined || at === undefined) return;
    move(at);
    await sweep(parts);
  }
  throw new Error('settle: tasks keep running (10,000 runs)');
}

/**
 * Stops the runs in flight (as a shutdown does): a run waiting on the clock gets its timers fired and ends; one still
 * busy, or waiting on something else, is left behind (its writes then fail on the closed store, as would a process's
 * that outlived its store).
 */
export async function stopFlights(parts: SettleParts): Promise<void> {
  const { clock, watch } = parts;
  for (const flight of [...parts.flights]) {
    flight.handle.abort('shutdown');
    for (let i = 0; i < 100; i++) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      const at = clock.next();
      if (flight.ended || watch.busy() || at === undefined) break;
      clock.advance(Math.max(0, at - clock.now()));
    }
  }
}
