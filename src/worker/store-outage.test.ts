// A run whose store goes away: the task is not failed but runs again from its memoized steps; claims back off.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clockWithNow } from '../tasks/clock.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// This test is a composition root: it wires the worker to a real store, as the CLI does.
import { createSqliteTaskStore } from '../stores/sqlite/task-store.js';
import { StoreUnavailableError } from '../tasks/errors.js';
import type { TaskRunner } from '../tasks/execution.js';
import type { TaskStore } from '../tasks/store.js';
import type { NewTask, TaskSnapshot } from '../tasks/task.js';
import { startRun } from './run-task.js';
import { createWorker, type Worker } from './worker.js';
import { ALICE, workerTask } from '../../test/support/tasks.js';

const T0 = 1_700_000_000_000;
const LEASE = 200;

let clock: number;
const now = (): number => clock;
let dir: string;
let stores: TaskStore[];
let workers: Worker[];

const newTask = (): NewTask => workerTask(clock);

beforeEach(() => {
  clock = T0;
  dir = mkdtempSync(join(tmpdir(), 'durable-mcp-outage-'));
  stores = [];
  workers = [];
});

afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.stop(1_000);
  for (const store of stores.splice(0)) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const openStore = (): TaskStore => {
  const store = createSqliteTaskStore({ path: join(dir, 'tasks.db') });
  stores.push(store);
  return store;
};

/** The store, with some of its writes failing as if it were unreachable. */
const flaky = (store: TaskStore, failing: { saveStep?: number; status?: number; claim?: number }) => {
  const wrapped: TaskStore = Object.create(store) as TaskStore;
  const down = (): Promise<never> => Promise.reject(new StoreUnavailableError('connection lost'));
  wrapped.saveStep = (...args) =>
    (failing.saveStep ?? 0) > 0 ? (failing.saveStep!--, down()) : store.saveStep(...args);
  wrapped.setStatusMessage = (...args) =>
    (failing.status ?? 0) > 0 ? (failing.status!--, down()) : store.setStatusMessage(...args);
  wrapped.claim = (...args) => ((failing.claim ?? 0) > 0 ? (failing.claim!--, down()) : store.claim(...args));
  wrapped.claimBatch = async (...args) =>
    (failing.claim ?? 0) > 0 ? (failing.claim!--, down()) : ((await store.claimBatch?.(...args)) ?? []);
  return wrapped;
};

const snapshot = async (store: TaskStore, id: string): Promise<TaskSnapshot> => {
  const got = await store.get(id, ALICE, clock);
  if (typeof got === 'string') throw new Error(`no snapshot of ${id}: ${got}`);
  return got;
};

/** Two steps; the result lists every step value and how often each body ran. */
const twoSteps = (bodies: Record<string, number>): TaskRunner => {
  return async (task, exec) => {
    const a = await exec.step('a', () => {
      bodies.a = (bodies.a ?? 0) + 1;
      return 'A';
    });
    await exec.status('halfway');
    const b = await exec.step('b', () => {
      bodies.b = (bodies.b ?? 0) + 1;
      return 'B';
    });
    return { kind: 'completed', result: { steps: [a, b], task: task.id } };
  };
};

describe('a run whose store writes fail with StoreUnavailableError', () => {
  for (const what of ['saveStep', 'status'] as const) {
    it(`ends without a write when ${what} fails, and the replay completes from the memoized steps`, async () => {
      const store = openStore();
      const task = await store.create(newTask());
      const claimed = await store.claim('w1', LEASE, clock);
      if (claimed === undefined) throw new Error('nothing to claim');
      const bodies: Record<string, number> = {};
      const errors: unknown[] = [];
      // saveStep: step a commits, step b's commit fails. status: the status write after step a fails.
      const failing = what === 'saveStep' ? flaky(store, {}) : flaky(store, { status: 1 });
      if (what === 'saveStep') {
        let saves = 0;
        failing.saveStep = (...args) =>
          ++saves === 2
            ? Promise.reject(new StoreUnavailableError('connection lost'))
            : store.saveStep(...args);
      }
      const run = startRun(
        {
          store: failing,
          runner: twoSteps(bodies),
          leaseMs: LEASE,
          clock: clockWithNow(now),
          onError: (e) => errors.push(e),
        },
        claimed,
      );
      await run.done;
      expect(errors.some((e) => e instanceof StoreUnavailableError)).toBe(true);
      // Not failed, not finished: still working, and runnable again once the lease has expired.
      expect((await snapshot(store, task.id)).status).toBe('working');
      expect(await store.claim('w2', LEASE, clock)).toBeUndefined();
      clock += LEASE + 1;
      const again = await store.claim('w2', LEASE, clock);
      expect(again?.id).toBe(task.id);
      expect(again?.takenOver).toBe(true);
      expect(again?.steps).toEqual({ a: 'A' });
      await startRun({ store, runner: twoSteps(bodies), leaseMs: LEASE, clock: clockWithNow(now) }, again!)
        .done;
      const done = await snapshot(store, task.id);
      expect(done.status).toBe('completed');
      expect(done.result).toMatchObject({ steps: ['A', 'B'] });
      // Step a committed before the outage and never ran again.
      expect(bodies.a).toBe(1);
    });
  }

  it('does not fail the task when the handler swallows the store error and returns', async () => {
    const store = openStore();
    const task = await store.create(newTask());
    const claimed = await store.claim('w1', LEASE, clock);
    if (claimed === undefined) throw new Error('nothing to claim');
    const runner: TaskRunner = async (_task, exec) => {
      try {
        await exec.step('a', () => 1);
      } catch {
        return { kind: 'failed', error: { code: -32603, message: 'gave up' }, statusMessage: 'gave up' };
      }
      return { kind: 'completed', result: {} };
    };
    await startRun(
      { store: flaky(store, { saveStep: 1 }), runner, leaseMs: LEASE, clock: clockWithNow(now) },
      claimed,
    ).done;
    expect((await snapshot(store, task.id)).status).toBe('working');
  });
});

describe('the worker while claims fail', () => {
  it('backs off instead of claiming every poll, and claims again once the store is back', async () => {
    const store = openStore();
    const failing = { claim: 1_000 };
    const wrapped = flaky(store, failing);
    let attempts = 0;
    const claim = wrapped.claim;
    wrapped.claim = (...args) => {
      attempts += 1;
      return claim(...args);
    };
    const claimBatch = wrapped.claimBatch;
    wrapped.claimBatch = (...args) => {
      attempts += 1;
      return claimBatch?.(...args) ?? Promise.resolve([]);
    };
    const done: string[] = [];
    const worker = createWorker({
      store: wrapped,
      runner: async (task) => {
        done.push(task.id);
        return { kind: 'completed', result: {} };
      },
      pollMs: 20,
      leaseMs: LEASE,
      now,
      onError: () => undefined,
    });
    workers.push(worker);
    worker.start();
    await new Promise((resolve) => setTimeout(resolve, 600));
    // Every 20 ms would be ~30 attempts; a doubling backoff from 20 ms makes about five.
    expect(attempts).toBeGreaterThan(1);
    expect(attempts).toBeLessThan(10);
    failing.claim = 0;
    const task = await store.create(newTask());
    const deadline = Date.now() + 8_000;
    while (!done.includes(task.id) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(done).toContain(task.id);
  });
});
