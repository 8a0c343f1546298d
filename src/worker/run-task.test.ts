// A single run on a real SQLite file with a fake TaskRunner: fencing after a takeover, and failed ending writes.
import { describe, expect, it } from 'vitest';
import { clockWithNow } from '../tasks/clock.js';
import { StoreUnavailableError } from '../tasks/errors.js';
import { LeaseLostError } from '../tasks/execution.js';
import type { TaskStore } from '../tasks/store.js';
import type { ClaimedTask } from '../tasks/task.js';
import { startRun, type RunDeps, type RunningTask } from './run-task.js';
import {
  advance,
  gate,
  LEASE,
  newTask,
  now,
  openStore,
  snapshot,
  track,
  useWorkerHarness,
} from '../../test/support/worker-harness.js';
import { drivenChangeFeed } from '../../test/support/change-feed.js';

useWorkerHarness();

describe('startRun', () => {
  const run = (deps: RunDeps, task: ClaimedTask): RunningTask => {
    return track(startRun(deps, task));
  };

  it('takes a cancel notice as a hint: only the cancel request in the store stops the run', async () => {
    const store = openStore();
    const feed = drivenChangeFeed();
    // The store as a run sees it, with a change feed anyone could write to (as PostgreSQL's NOTIFY).
    const spied: TaskStore = Object.create(store) as TaskStore;
    Object.defineProperty(spied, 'changes', { value: feed.changes });
    const task = newTask();
    await store.create(task);
    const claimed = await store.claim('w1', LEASE, now());
    if (claimed === undefined) throw new Error('nothing to claim');
    const release = gate();
    const started = gate();
    let aborted = false;
    const running = run(
      {
        store: spied,
        runner: async (_task, exec) => {
          exec.signal.addEventListener('abort', () => (aborted = true));
          started.open();
          await release.wait;
          return exec.signal.aborted ? { kind: 'cancelled' } : { kind: 'completed', result: { ok: true } };
        },
        leaseMs: 60_000, // a quiet heartbeat: only the notice could stop the run early
        clock: clockWithNow(now),
      },
      claimed,
    );
    await started.wait;
    expect(feed.size()).toBeGreaterThan(0); // the run listens
    feed.emit({ taskId: task.id, runnable: false, cancelRequested: true }); // forged: nobody asked to cancel
    await new Promise((r) => setTimeout(r, 100));
    expect(aborted).toBe(false);
    // A real cancel request, then its notice: the run stops at once.
    expect(await store.requestCancel(task.id, task.owner, now())).toMatchObject({ ok: true });
    feed.emit({ taskId: task.id, runnable: false, cancelRequested: true });
    await new Promise((r) => setTimeout(r, 100));
    expect(aborted).toBe(true);
    release.open();
    await running.done;
    expect((await snapshot(store, task.id)).status).toBe('cancelled');
  });

  it('rejects the late write of a run whose lease was taken over', async () => {
    const store = openStore();
    const other = openStore();
    const finishes: boolean[] = [];
    const spy: TaskStore = Object.create(store) as TaskStore;
    spy.finish = async (...args) => {
      const ok = await store.finish(...args);
      finishes.push(ok);
      return ok;
    };
    const task = newTask();
    await store.create(task);
    const claimed = await store.claim('w1', LEASE, now());
    if (claimed === undefined) throw new Error('nothing to claim');
    const late = gate();
    // A long lease keeps the heartbeat quiet, so nothing tells this run it lost the task before it ends.
    const first = run(
      {
        store: spy,
        runner: async () => {
          await late.wait;
          return { kind: 'completed', result: { by: 'first' } };
        },
        leaseMs: 60_000,
        clock: clockWithNow(now),
      },
      claimed,
    );

    advance(LEASE + 1);
    const taken = await other.claim('w2', LEASE, now());
    expect(taken).toMatchObject({ id: task.id, token: 2, takenOver: true });
    late.open();
    await first.done;
    expect(finishes).toEqual([false]);
    expect(await snapshot(store, task.id)).toMatchObject({ status: 'working', result: undefined });
    expect(await other.finish(task.id, 2, { kind: 'completed', result: { by: 'second' } }, now())).toBe(true);
    expect((await snapshot(store, task.id)).result).toEqual({ by: 'second' });
  });

  it('stops a run at its next step once its lease was taken over', async () => {
    const store = openStore();
    const other = openStore();
    const task = newTask();
    await store.create(task);
    const claimed = await store.claim('w1', LEASE, now());
    if (claimed === undefined) throw new Error('nothing to claim');
    const proceed = gate();
    let stepError: unknown;
    let fnRan = false;
    const first = run(
      {
        store,
        runner: async (_task, exec) => {
          await proceed.wait;
          try {
            await exec.step('after', () => {
              fnRan = true;
              return 1;
            });
          } catch (err) {
            stepError = err;
            expect(exec.signal.aborted).toBe(true);
            expect(exec.signal.reason).toBe('lease-lost');
            throw err;
          }
          return { kind: 'completed', result: { by: 'first' } };
        },
        leaseMs: 60_000,
        clock: clockWithNow(now),
      },
      claimed,
    );
    advance(LEASE + 1);
    await other.claim('w2', LEASE, now());
    proceed.open();
    await first.done;
    expect(fnRan).toBe(true); // the step ran, but its result was not recorded
    expect(stepError).toBeInstanceOf(LeaseLostError);
    const again = await other.claim('w3', LEASE, now() + LEASE + 1);
    expect(again?.steps).toEqual({});
    expect((await snapshot(store, task.id)).status).toBe('working');
  });

  it('reports a store failure of its ending write through onError instead of rejecting', async () => {
    const store = openStore();
    const failing: TaskStore = Object.create(store) as TaskStore;
    failing.finish = () => Promise.reject(new StoreUnavailableError('SQLITE_BUSY'));
    const errors: unknown[] = [];
    const deps: RunDeps = {
      store: failing,
      runner: async () => ({ kind: 'completed', result: {} }),
      leaseMs: 60_000,
      clock: clockWithNow(now),
      onError: (err) => errors.push(err),
    };
    // The three ways a run ends: a normal run, a cancel seen at claim, a crash takeover that must fail.
    const endings: string[] = [];
    for (const flags of [
      { cancelRequested: false, takenOver: false, replayAfterCrash: true },
      { cancelRequested: true, takenOver: false, replayAfterCrash: true },
      { cancelRequested: false, takenOver: true, replayAfterCrash: false },
    ]) {
      const task = newTask();
      await store.create(task);
      const claimed = await store.claim('w1', LEASE, now());
      if (claimed === undefined) throw new Error('nothing to claim');
      const r = run(deps, { ...claimed, ...flags });
      endings.push(
        await r.done.then(
          () => 'resolved',
          () => 'rejected',
        ),
      );
      await store.finish(claimed.id, claimed.token, { kind: 'released' }, now());
    }
    expect(endings).toEqual(['resolved', 'resolved', 'resolved']);
    expect(errors).toHaveLength(3);
    expect(errors.every((e) => e instanceof StoreUnavailableError)).toBe(true);
  });
});
