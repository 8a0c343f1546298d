// The worker runtime: claims runnable tasks up to a concurrency limit, wakes on changes, sweeps TTLs, stops gracefully.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { clockWithNow, type Clock } from '../tasks/clock.js';
import type { TaskRunner } from '../tasks/execution.js';
import type { TaskStore } from '../tasks/store.js';
import type { ClaimedTask } from '../tasks/task.js';
import { startRun, type RunningTask } from './run-task.js';
import type { TaskObserver } from '../tasks/observer.js';

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
  workerId?: string;
  onError?: (err: unknown, taskId?: string) => void;
  observer?: TaskObserver;
}

export interface Worker {
  readonly id: string;
  start(): void;
  /** Looks for work now (also called on change notifications). */
  poke(): void;
  /** Stops claiming; waits up to graceMs for runs to finish, then releases the rest for other workers. */
  stop(graceMs?: number): Promise<void>;
  readonly active: number;
}

const MAX_CLAIM_BACKOFF_MS = 5_000;

export function createWorker(options: WorkerOptions): Worker {
  const store = options.store;
  const clock = options.clock ?? clockWithNow(options.now ?? Date.now);
  const now = (): number => clock.now();
  const concurrency = options.concurrency ?? 8;
  const leaseMs = options.leaseMs ?? 30_000;
  const id = options.workerId ?? `w_${randomBytes(6).toString('hex')}`;
  const running = new Map<string, RunningTask>();
  let stopped = true;
  let claiming = false;
  let again = false;
  // After a failed claim (store away), claims pause for a backoff that doubles up to MAX_CLAIM_BACKOFF_MS. Measured
  // on the monotonic clock: a jump of the wall clock must not stretch or skip it.
  const pollMs = options.pollMs ?? 500;
  let claimBackoff = 0;
  let claimPausedUntil = 0;
  const timers: NodeJS.Timeout[] = [];
  let unsubscribe: (() => void) | undefined;

  // One timer, for the earliest wake-up known (of waits this process ended, or found in the store): however many
  // tasks wait, the process holds no more than this for them. Other processes' waits are found by the poll.
  let wakeAt = Infinity;
  let cancelWake: (() => void) | undefined;
  const wakeBy = (at: number): void => {
    if (stopped || at >= wakeAt) return;
    cancelWake?.();
    wakeAt = at;
    cancelWake = clock.setTimer(
      () => {
        wakeAt = Infinity;
        cancelWake = undefined;
        void fill().then(lookAhead);
      },
      Math.max(0, at - now()),
    );
  };
  const lookAhead = async (): Promise<void> => {
    // While claims pause for an unreachable store, so does this; a failure is not reported (the claims report
    // the outage): the wake-up timer is only a hint, the poll finds due tasks anyway.
    if (stopped || store.nextWakeAt === undefined || performance.now() < claimPausedUntil) return;
    try {
      const at = await store.nextWakeAt(now());
      if (at !== undefined) wakeBy(at);
    } catch {
      // the next poll looks again
    }
  };

  const start = (task: ClaimedTask): void => {
    const run = startRun(
      {
        store,
        runner: options.runner,
        leaseMs,
        clock,
        random: options.random,
        onError: options.onError,
        observer: options.observer,
        onWait: wakeBy,
      },
      task,
    );
    running.set(task.id, run);
    void run.done.finally(() => {
      running.delete(task.id);
      // Claim the next task after this turn: the ending's other consumers (its pushes to subscribers, which read
      // and write in microtasks) go first instead of waiting behind a claim transaction.
      if (!stopped) setImmediate(() => void fill());
    });
  };

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
        while (!stopped && running.size < concurrency) {
          const free = concurrency - running.size;
          const tasks =
            store.claimBatch !== undefined && free > 1
              ? await store.claimBatch(id, leaseMs, now(), free)
              : [await store.claim(id, leaseMs, now())].filter((t) => t !== undefined);
          if (tasks.length === 0) break;
          if (stopped) {
            // stop() came while this claim was in flight: hand the tasks straight back.
            for (const task of tasks) await store.finish(task.id, task.token, { kind: 'released' }, now());
            break;
          }
          for (const task of tasks) start(task);
          if (tasks.length < free) break;
        }
      } while (again && !stopped);
      claimBackoff = 0;
    } catch (err) {
      claimBackoff = Math.min(MAX_CLAIM_BACKOFF_MS, Math.max(pollMs, claimBackoff * 2));
      claimPausedUntil = performance.now() + claimBackoff * (0.75 + Math.random() / 4);
      options.onError?.(err);
    } finally {
      claiming = false;
    }
  };

  const sweep = async (): Promise<void> => {
    try {
      await store.expire(now());
      await store.purge(now(), options.retentionGraceMs ?? 24 * 3_600_000);
    } catch (err) {
      options.onError?.(err);
    }
  };

  return {
    id,
    get active() {
      return running.size;
    },
    start() {
      if (!stopped) return;
      stopped = false;
      unsubscribe = store.changes?.subscribe(
        (c) => {
          // Wake after the current turn: the commit's other listeners (pushes, the request's answer) go first.
          if (c.runnable) setImmediate(() => void fill());
        },
        // Tasks made runnable while the feed was not listening (a reconnection) are claimed now, not on the poll.
        () => setImmediate(() => void fill()),
      );
      timers.push(setInterval(() => void fill().then(lookAhead), pollMs));
      timers.push(setInterval(() => void sweep(), options.sweepMs ?? 5_000));
      for (const t of timers) t.unref();
      void sweep().then(fill).then(lookAhead);
    },
    poke() {
      if (!stopped) void fill();
    },
    async stop(graceMs = 10_000) {
      stopped = true;
      unsubscribe?.();
      for (const t of timers.splice(0)) clearInterval(t);
      cancelWake?.();
      cancelWake = undefined;
      wakeAt = Infinity;
      while (claiming) await new Promise((r) => setTimeout(r, 5));
      const all = Promise.all([...running.values()].map((r) => r.done));
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        all.then(() => false),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs))),
      ]);
      clearTimeout(timer);
      if (timedOut) {
        for (const r of running.values()) r.abort('shutdown');
        await all;
      }
      while (claiming) await new Promise((r) => setTimeout(r, 5));
    },
  };
}
