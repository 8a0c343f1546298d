// The worker's stop(): the grace given to runs, the release of the rest, and claims still in flight.
import { describe, expect, it } from 'vitest';
import type { TaskStore } from '../tasks/store.js';
import {
  aborted,
  gate,
  LEASE,
  newTask,
  now,
  openStore,
  sleep,
  snapshot,
  useWorkerHarness,
  waitFor,
  worker,
} from '../../test/support/worker-harness.js';

useWorkerHarness();

describe('worker', () => {
  it('releases a long run for other workers when stop() runs out of grace', async () => {
    const store = openStore();
    const started = gate();
    let reason: unknown;
    const w = worker({
      store,
      runner: async (_task, exec) => {
        started.open();
        await aborted(exec.signal);
        reason = exec.signal.reason;
        throw new Error('interrupted');
      },
    });
    const task = newTask();
    await store.create(task);
    await started.wait;
    expect(await store.countRunnable(now())).toBe(0);
    const before = Date.now();
    await w.stop(100);
    expect(Date.now() - before).toBeGreaterThanOrEqual(90);
    expect(reason).toBe('shutdown');
    expect(w.active).toBe(0);
    expect((await snapshot(store, task.id)).status).toBe('working');
    expect(await store.countRunnable(now())).toBe(1);
    expect(await store.claim('w-next', LEASE, now())).toMatchObject({
      id: task.id,
      token: 2,
      takenOver: false,
    });
  });

  it('lets a run that ends within the grace finish normally on stop()', async () => {
    const store = openStore();
    const started = gate();
    const finishRun = gate();
    const w = worker({
      store,
      runner: async () => {
        started.open();
        await finishRun.wait;
        return { kind: 'completed', result: { ok: true } };
      },
    });
    const task = newTask();
    await store.create(task);
    await started.wait;
    const stopping = w.stop(2_000);
    await sleep(20);
    finishRun.open();
    await stopping;
    expect(await snapshot(store, task.id)).toMatchObject({ status: 'completed', result: { ok: true } });
  });

  it('leaves no run behind when stop() comes while a claim is in flight', async () => {
    // A networked store (PostgreSQL) answers claim() after a round trip; model that with a delay.
    const inner = openStore();
    const slow: TaskStore = Object.create(inner) as TaskStore;
    slow.claim = async (...args) => {
      await sleep(40);
      return inner.claim(...args);
    };
    slow.claimBatch = async (...args) => {
      await sleep(40);
      return (await inner.claimBatch?.(...args)) ?? [];
    };
    const task = newTask();
    await inner.create(task);
    const release = gate();
    let started = false;
    const w = worker({
      store: slow,
      runner: async () => {
        started = true;
        await release.wait;
        return { kind: 'released' };
      },
    });
    await sleep(10); // the first claim is now in flight
    await w.stop(50);
    const activeAfterStop = w.active;
    const startedAfterStop = started;
    release.open();
    await waitFor(() => w.active === 0, 'the late run to end');
    expect(activeAfterStop, 'runs still going after stop() resolved').toBe(0);
    expect(startedAfterStop, 'a run started by a stopped worker').toBe(false);
    expect(await inner.countRunnable(now())).toBe(1);
  });

  it('waits in stop() for a TTL sweep in flight, so that none runs on after it (into a closed store)', async () => {
    const inner = openStore();
    const held: TaskStore = Object.create(inner) as TaskStore;
    const sweepStarted = gate();
    const release = gate();
    let sweepEnded = false;
    held.expire = async (...args) => {
      sweepStarted.open();
      await release.wait;
      const expired = await inner.expire(...args);
      sweepEnded = true;
      return expired;
    };
    const w = worker({ store: held, runner: async () => ({ kind: 'released' }) });
    await sweepStarted.wait;
    let stopped = false;
    const stopping = w.stop(50).then(() => {
      stopped = true;
    });
    await sleep(100);
    expect(stopped, 'stop() resolved while the sweep was still running').toBe(false);
    release.open();
    await stopping;
    expect(sweepEnded).toBe(true);
  });
});
