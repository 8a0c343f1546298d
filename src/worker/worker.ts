// The worker runtime: claims runnable tasks up to a concurrency limit, wakes on changes, sweeps TTLs, stops gracefully.
import { clockWithNow, type Clock } from '../tasks/clock.js';
import { newWorkerId } from '../tasks/instance.js';
import type { TaskRunner } from '../tasks/execution.js';
import type { ClaimScope, TaskStore } from '../tasks/store.js';
import type { ClaimedTask } from '../tasks/task.js';
import { createClaimLoop } from './claim-loop.js';
import { startRun, type RunDeps, type RunningTask } from './run-task.js';
import { versionWaitMarker } from './version-waits.js';
import { createWakeTimer } from './wake-timer.js';
import { settleOrAbort } from '../pacing/grace.js';
import type { TaskObserver } from '../tasks/observer.js';
import { resolveTaskLimits, storedBytesLimitOf } from '../tasks/limits.js';

export interface WorkerOptions {
  store: TaskStore;
  runner: TaskRunner;
  concurrency?: number;
  /** Lease length; heartbeats renew it every third of it. */
  leaseMs?: number;
  /** Backstop poll for work from other processes and expired leases. */
  pollMs?: number;
  /** TTL sweep interval (expire, then purge after the retention grace). */
  sweepMs?: number;
  retentionGraceMs?: number;
  now?: () => number;
  /** Time and timers of runs (step timeouts, wake-ups of waiting tasks); replaces `now` when given. */
  clock?: Clock;
  /** Jitter source of retry backoffs (default Math.random). */
  random?: () => number;
  /** The lease owner id of this worker's claims (default: `<host>:<pid>:w_<random>`, naming its process). */
  workerId?: string;
  onError?: (err: unknown, taskId?: string) => void;
  observer?: TaskObserver;
  /** The tasks this worker may claim (read before each claim); undefined: any. */
  scope?: () => ClaimScope | undefined;
  /**
   * A runnable task of one of this worker's tools that its scope leaves out (a version of the tool its code does not
   * replay) and that no process claimed for this long is shown to its owner as waiting for a server running its
   * version, until one claims it (default 30 s; the worker looks at most that often).
   */
  versionWaitMs?: number;
  /**
   * Steps, sleeps and ctx.patched decisions one task may record (default 10 000): a run that would record one more
   * is refused (TaskLimitError), since every run replays the whole history.
   */
  maxStepsPerTask?: number;
  /** The largest step value a run may record, as UTF-8 bytes of its JSON (default 4 MiB). */
  maxStepBytes?: number;
  /** Chunks a task may append to its streams, all together (ctx.stream; default 10 000). */
  maxStreamChunksPerTask?: number;
  /** UTF-8 bytes of chunk text a task may append to its streams, all together (default 16 MiB). */
  maxStreamBytesPerTask?: number;
  /**
   * The bytes the kept tasks of one principal may store (TaskStore.storedBytes; default 1 GiB, 0: no limit): a step
   * value that would pass it is not written, and fails its step. Give it the value the tasks extension has.
   */
  maxStoredBytesPerPrincipal?: number;
}

/** How often the tasks left out of the worker's scope are counted (observer.outOfScope). */
const OUT_OF_SCOPE_EVERY_MS = 60_000;

export interface Worker {
  readonly id: string;
  start(): void;
  /** Looks for work now (also called on change notifications). */
  poke(): void;
  /** Stops claiming; waits up to graceMs for runs to finish, then releases the rest for other workers. */
  stop(graceMs?: number): Promise<void>;
  readonly active: number;
}

/** How many tasks whose live input wait lapsed one sweep makes runnable again (more on the next). */
const LIVE_INPUT_REVIVE_BATCH = 128;

/** Expires tasks past their TTL, then purges those past the retention grace, then revives lapsed live waits and frees lapsed slots. */
async function sweepTtls(
  store: TaskStore,
  now: () => number,
  retentionGraceMs: number,
  onError: WorkerOptions['onError'],
): Promise<void> {
  try {
    await store.expire(now());
    await store.purge(now(), retentionGraceMs);
    // Tasks whose run waited for live input in a process that is gone: runnable again, for a claim to replay.
    await store.liveInput?.revive(now(), LIVE_INPUT_REVIVE_BATCH);
    // Parked tasks of keys whose slots a lapsed lease (a crashed process) freed.
    await store.freeSlots?.(now());
  } catch (err) {
    onError?.(err);
  }
}

/** What wakes a started worker: change notifications, the backstop poll, the TTL sweep. */
interface Loops {
  fill(): Promise<void>;
  lookAhead(): Promise<void>;
  sweep(): Promise<void>;
  /** Wakes the claims at `at` (a wait whose end this process knows). */
  wakeBy(at: number): void;
}

/** Starts the worker's wake-ups and a first sweep and claim; returns the function that ends them. */
function startLoops(store: TaskStore, pollMs: number, sweepMs: number, loops: Loops): () => void {
  const unsubscribe = store.changes?.subscribe(
    (c) => {
      // Wake after the current turn: the commit's other listeners (pushes, the request's answer) go first.
      if (c.runnable) setImmediate(() => void loops.fill());
      // A start a claim of this process reserved (a rate limit): claimed when due, not on the next poll.
      else if (c.wakeAt !== undefined) loops.wakeBy(c.wakeAt);
    },
    // Tasks made runnable while the feed was not listening (a reconnection) are claimed now, not on the poll.
    () => setImmediate(() => void loops.fill()),
  );
  const timers = [
    setInterval(() => void loops.fill().then(loops.lookAhead), pollMs),
    setInterval(() => void loops.sweep(), sweepMs),
  ];
  for (const t of timers) t.unref();
  void loops.sweep().then(loops.fill).then(loops.lookAhead);
  return () => {
    unsubscribe?.();
    for (const t of timers) clearInterval(t);
  };
}

/** Waits up to graceMs for the runs to end, then aborts the rest (handed back for other workers) and waits for them. */
async function drain(running: Map<string, RunningTask>, graceMs: number): Promise<void> {
  const all = Promise.all([...running.values()].map((r) => r.done));
  await settleOrAbort(all, graceMs, () => {
    for (const r of running.values()) r.abort('shutdown');
  });
}

/** What every run of this worker shares; `onWait` hears when a run ended waiting. */
const runDepsOf = (
  options: WorkerOptions,
  clock: Clock,
  leaseMs: number,
  onWait: (until: number) => void,
): RunDeps => ({
  store: options.store,
  runner: options.runner,
  leaseMs,
  clock,
  random: options.random,
  onError: options.onError,
  observer: options.observer,
  onWait,
  limits: resolveTaskLimits({
    maxStepsPerTask: options.maxStepsPerTask,
    maxStepBytes: options.maxStepBytes,
    maxStreamChunksPerTask: options.maxStreamChunksPerTask,
    maxStreamBytesPerTask: options.maxStreamBytesPerTask,
  }),
  storedBytesLimit: storedBytesLimitOf(options.maxStoredBytesPerPrincipal),
});

/** Runs a claimed task among the running ones; `ended` is told once it is over. */
function launch(
  deps: RunDeps,
  running: Map<string, RunningTask>,
  task: ClaimedTask,
  ended: () => void,
): void {
  const run = startRun(deps, task);
  running.set(task.id, run);
  void run.done.finally(() => {
    running.delete(task.id);
    ended();
  });
}

/**
 * The TTL sweep, then the tasks out of the worker's scope: counted, and those waiting for a version marked. One sweep
 * at a time (`run` during one joins it); `idle` waits for the one in flight, which stop() must not leave running on
 * into a closed store.
 */
function sweeper(
  options: WorkerOptions,
  now: () => number,
): { run: () => Promise<void>; idle: () => Promise<void> } {
  const countOutOfScope = outOfScopeCounter(options, now);
  const markVersionWaits = versionWaitMarker(
    { ...options, versionWaitMs: options.versionWaitMs ?? 30_000 },
    now,
  );
  const once = async (): Promise<void> => {
    await sweepTtls(options.store, now, options.retentionGraceMs ?? 24 * 3_600_000, options.onError);
    await countOutOfScope();
    await markVersionWaits();
  };
  let sweeping: Promise<void> | undefined;
  return {
    run: () =>
      (sweeping ??= once().finally(() => {
        sweeping = undefined;
      })),
    idle: async () => {
      await sweeping?.catch(() => undefined);
    },
  };
}

/** Counts, at most once a minute, the runnable tasks the worker's scope leaves out, for its observer. */
function outOfScopeCounter(options: WorkerOptions, now: () => number): () => Promise<void> {
  let last = Number.NEGATIVE_INFINITY;
  let reported = false;
  return async () => {
    const scope = options.scope?.();
    const report = options.observer?.outOfScope;
    if (scope === undefined || report === undefined || options.store.outOfScope === undefined) return;
    if (now() - last < OUT_OF_SCOPE_EVERY_MS) return;
    last = now();
    try {
      const waiting = await options.store.outOfScope(scope, now());
      // Reported while there are any, and once more when they are gone.
      if (waiting.length > 0 || reported) report(waiting);
      reported = waiting.length > 0;
    } catch (err) {
      options.onError?.(err);
    }
  };
}

export function createWorker(options: WorkerOptions): Worker {
  const store = options.store;
  const clock = options.clock ?? clockWithNow(options.now ?? Date.now);
  const now = (): number => clock.now();
  const leaseMs = options.leaseMs ?? 30_000;
  const id = options.workerId ?? newWorkerId();
  const pollMs = options.pollMs ?? 500;
  const running = new Map<string, RunningTask>();
  let stopped = true;
  let stopLoops: (() => void) | undefined;

  const wake = createWakeTimer(
    clock,
    () => stopped,
    () => void claims.fill().then(lookAhead),
  );
  const lookAhead = async (): Promise<void> => {
    // While claims pause for an unreachable store, so does this; a failure is not reported (the claims report
    // the outage): the wake-up timer is only a hint, the poll finds due tasks anyway.
    if (stopped || store.nextWakeAt === undefined || claims.paused()) return;
    try {
      const at = await store.nextWakeAt(now());
      if (at !== undefined) wake.wakeBy(at);
    } catch {
      // the next poll looks again
    }
  };

  const runDeps = runDepsOf(options, clock, leaseMs, (at) => wake.wakeBy(at));
  // Claim the next task after a run's ending turn: the ending's other consumers (its pushes to subscribers, which
  // read and write in microtasks) go first instead of waiting behind a claim transaction.
  const start = (task: ClaimedTask): void =>
    launch(runDeps, running, task, () => {
      if (!stopped) setImmediate(() => void claims.fill());
    });
  const claims = createClaimLoop({
    store,
    workerId: id,
    leaseMs,
    concurrency: options.concurrency ?? 8,
    pollMs,
    now,
    active: () => running.size,
    stopped: () => stopped,
    start,
    onError: options.onError,
    scope: options.scope,
  });
  const sweep = sweeper(options, now);

  return {
    id,
    get active() {
      return running.size;
    },
    start() {
      if (!stopped) return;
      stopped = false;
      stopLoops = startLoops(store, pollMs, options.sweepMs ?? 5_000, {
        fill: claims.fill,
        lookAhead,
        sweep: sweep.run,
        wakeBy: (at) => wake.wakeBy(at),
      });
    },
    poke() {
      if (!stopped) void claims.fill();
    },
    async stop(graceMs = 10_000) {
      stopped = true;
      stopLoops?.();
      stopLoops = undefined;
      wake.cancel();
      await claims.idle();
      await drain(running, graceMs);
      await claims.idle();
      await sweep.idle();
    },
  };
}
