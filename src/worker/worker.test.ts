// The worker and a single run, on a real SQLite file with a fake TaskRunner (no protocol layer).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clockWithNow } from '../tasks/clock.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// This test is a composition root: it wires the worker to a real store, as the CLI does.
import { createSqliteTaskStore } from '../stores/sqlite/task-store.js';
import { StoreUnavailableError } from '../tasks/errors.js';
import { LeaseLostError, type TaskRunner } from '../tasks/execution.js';
import type { TaskStore } from '../tasks/store.js';
import type { ClaimedTask, NewTask, TaskSnapshot } from '../tasks/task.js';
import { startRun, type RunDeps, type RunningTask } from './run-task.js';
import { createWorker, type Worker, type WorkerOptions } from './worker.js';
import { ALICE, workerTask } from '../../test/support/tasks.js';

const T0 = 1_700_000_000_000;
const LEASE = 200;

const newTask = (overrides: Partial<NewTask> = {}): NewTask => workerTask(clock, overrides);

let clock: number;
const now = (): number => clock;
let dir: string;
let stores: TaskStore[];
let workers: Worker[];
let runs: RunningTask[];
let gates: (() => void)[];
let baselineTimers: number;

const refTimers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

beforeEach(() => {
  clock = T0;
  dir = mkdtempSync(join(tmpdir(), 'durable-mcp-worker-'));
  stores = [];
  workers = [];
  runs = [];
  gates = [];
  baselineTimers = refTimers();
});

afterEach(async () => {
  for (const open of gates.splice(0)) open();
  for (const worker of workers.splice(0)) await worker.stop(1_000);
  for (const run of runs.splice(0)) {
    run.abort('shutdown');
    await run.done.catch(() => undefined);
  }
  for (const store of stores.splice(0)) await store.close();
  rmSync(dir, { recursive: true, force: true });
  // A leaked timer never goes; a write's busy-retry sleep (at most some 200 ms) may still be ending.
  for (let i = 0; i < 50 && refTimers() > baselineTimers; i++) await sleep(20);
  expect(refTimers(), 'a worker or run left a timer behind').toBeLessThanOrEqual(baselineTimers);
});

/** Another connection to the same file (as another process would have). */
const openStore = () => {
  const store = createSqliteTaskStore({ path: join(dir, 'tasks.db') });
  stores.push(store);
  return store;
};

const worker = (options: Partial<WorkerOptions> & Pick<WorkerOptions, 'store' | 'runner'>): Worker => {
  const w = createWorker({ leaseMs: LEASE, pollMs: 20, sweepMs: 60_000, now, ...options });
  workers.push(w);
  w.start();
  return w;
};

/** A promise the test opens later; opened anyway in afterEach so no run hangs. */
const gate = (): { wait: Promise<void>; open: () => void } => {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  gates.push(open);
  return { wait, open };
};

const aborted = (signal: AbortSignal): Promise<void> =>
  signal.aborted
    ? Promise.resolve()
    : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));

async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 3_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

async function snapshot(store: TaskStore, id: string): Promise<TaskSnapshot> {
  const got = await store.get(id, ALICE, clock);
  if (typeof got === 'string') throw new Error(`expected a snapshot of ${id}, got ${got}`);
  return got;
}

const statusIs = (store: TaskStore, id: string, status: TaskSnapshot['status']) => async () =>
  (await snapshot(store, id)).status === status;

describe('worker', () => {
  it('runs a runnable task and finishes it completed', async () => {
    const store = openStore();
    const seen: ClaimedTask[] = [];
    const runner: TaskRunner = async (task) => {
      seen.push(task);
      return { kind: 'completed', result: { echoed: task.args } };
    };
    worker({ store, runner });
    const task = newTask({ args: { text: 'hi' } });
    await store.create(task);
    await waitFor(statusIs(store, task.id, 'completed'), 'completion');
    expect(await snapshot(store, task.id)).toMatchObject({
      status: 'completed',
      result: { echoed: { text: 'hi' } },
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ id: task.id, token: 1, takenOver: false, tool: 'echo' });
  });

  it('memoizes steps across a suspension for input', async () => {
    const store = openStore();
    let stepRuns = 0;
    let runCount = 0;
    const runner: TaskRunner = async (task, exec) => {
      runCount++;
      const fetched = await exec.step('fetch', () => {
        stepRuns++;
        return { rows: 3 };
      });
      const confirm = task.answers.confirm;
      if (confirm === undefined) {
        return { kind: 'input_required', requests: { confirm: { method: 'elicitation/create' } } };
      }
      return { kind: 'completed', result: { fetched, confirm } };
    };
    worker({ store, runner });
    const task = newTask();
    await store.create(task);
    await waitFor(statusIs(store, task.id, 'input_required'), 'the input request');
    expect((await snapshot(store, task.id)).inputRequests).toEqual({
      confirm: { method: 'elicitation/create' },
    });
    expect(await store.answer(task.id, ALICE, { confirm: { action: 'accept' } }, clock)).toEqual({
      ok: true,
      resumed: true,
    });
    await waitFor(statusIs(store, task.id, 'completed'), 'completion after the answer');
    expect((await snapshot(store, task.id)).result).toEqual({
      fetched: { rows: 3 },
      confirm: { action: 'accept' },
    });
    expect(runCount).toBe(2);
    expect(stepRuns).toBe(1);
  });

  it('aborts the run on cancel and ends the task cancelled', async () => {
    const store = openStore();
    let reason: unknown;
    const started = gate();
    const runner: TaskRunner = async (_task, exec) => {
      started.open();
      await aborted(exec.signal);
      reason = exec.signal.reason;
      throw new Error('aborted');
    };
    worker({ store, runner });
    const task = newTask();
    await store.create(task);
    await started.wait;
    expect(await store.requestCancel(task.id, ALICE, clock)).toEqual({
      ok: true,
      cancelledNow: false,
      running: true,
    });
    await waitFor(statusIs(store, task.id, 'cancelled'), 'cancellation');
    expect(reason).toBe('cancel');
  });

  it('learns of a cancel requested through another connection from its heartbeat', async () => {
    const store = openStore();
    const other = openStore();
    const started = gate();
    let reason: unknown;
    const runner: TaskRunner = async (_task, exec) => {
      started.open();
      await aborted(exec.signal);
      reason = exec.signal.reason;
      return { kind: 'cancelled' };
    };
    worker({ store, runner });
    const task = newTask();
    await store.create(task);
    await started.wait;
    expect(await other.requestCancel(task.id, ALICE, clock)).toMatchObject({ ok: true, running: true });
    await waitFor(statusIs(store, task.id, 'cancelled'), 'cancellation via heartbeat');
    expect(reason).toBe('cancel');
  });

  it('stops a run whose lease was taken over, and writes nothing more from it', async () => {
    const store = openStore();
    const other = openStore();
    const started = gate();
    let reason: unknown;
    const w = worker({
      store,
      runner: async (_task, exec) => {
        started.open();
        await aborted(exec.signal);
        reason = exec.signal.reason;
        return { kind: 'completed', result: { by: 'first' } };
      },
    });
    const task = newTask();
    await store.create(task);
    await started.wait;
    // The first worker's clock is frozen, so its heartbeats keep the lease at T0 + LEASE; another
    // process whose clock is past that sees the lease as expired and takes the task over.
    const taken = await other.claim('w-other', 60_000, T0 + LEASE + 1);
    expect(taken).toMatchObject({ id: task.id, token: 2, takenOver: true });
    await waitFor(() => w.active === 0, 'the first run to stop');
    expect(reason).toBe('lease-lost');
    expect(await snapshot(store, task.id)).toMatchObject({ status: 'working', result: undefined });
    expect(await other.finish(task.id, 2, { kind: 'completed', result: { by: 'second' } }, clock)).toBe(true);
    expect((await snapshot(store, task.id)).result).toEqual({ by: 'second' });
  });

  it('fails a task taken over after a crash when its tool must not re-run', async () => {
    const store = openStore();
    const task = newTask({ replayAfterCrash: false });
    await store.create(task);
    // A worker that crashed: it claimed the task and was never heard of again.
    expect(await store.claim('w-crashed', LEASE, clock)).toMatchObject({ id: task.id, token: 1 });
    clock += LEASE + 1;
    let ran = false;
    worker({
      store,
      runner: async () => {
        ran = true;
        return { kind: 'completed', result: {} };
      },
    });
    await waitFor(statusIs(store, task.id, 'failed'), 'the task to fail');
    const got = await snapshot(store, task.id);
    expect(got.error).toEqual({ code: -32603, message: 'server restarted while the task was running' });
    expect(got.statusMessage).toMatch(/restarted/);
    expect(ran).toBe(false);
  });

  it('replays a task taken over after a crash when its tool may re-run', async () => {
    const store = openStore();
    const task = newTask({ replayAfterCrash: true });
    await store.create(task);
    const crashed = await store.claim('w-crashed', LEASE, clock);
    await store.saveStep(task.id, crashed?.token ?? 0, 'first', 1, clock);
    clock += LEASE + 1;
    const seen: ClaimedTask[] = [];
    worker({
      store,
      runner: async (claimed, exec) => {
        seen.push(claimed);
        const first = await exec.step('first', () => 99);
        return { kind: 'completed', result: { first } };
      },
    });
    await waitFor(statusIs(store, task.id, 'completed'), 'the replay to complete');
    expect(seen[0]).toMatchObject({ token: 2, takenOver: true });
    expect((await snapshot(store, task.id)).result).toEqual({ first: 1 });
  });

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
    expect(await store.countRunnable(clock)).toBe(0);
    const before = Date.now();
    await w.stop(100);
    expect(Date.now() - before).toBeGreaterThanOrEqual(90);
    expect(reason).toBe('shutdown');
    expect(w.active).toBe(0);
    expect((await snapshot(store, task.id)).status).toBe('working');
    expect(await store.countRunnable(clock)).toBe(1);
    expect(await store.claim('w-next', LEASE, clock)).toMatchObject({
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
    expect(await inner.countRunnable(clock)).toBe(1);
  });
});

describe('startRun', () => {
  const run = (deps: RunDeps, task: ClaimedTask): RunningTask => {
    const r = startRun(deps, task);
    runs.push(r);
    return r;
  };

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
    const claimed = await store.claim('w1', LEASE, clock);
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

    clock += LEASE + 1;
    const taken = await other.claim('w2', LEASE, clock);
    expect(taken).toMatchObject({ id: task.id, token: 2, takenOver: true });
    late.open();
    await first.done;
    expect(finishes).toEqual([false]);
    expect(await snapshot(store, task.id)).toMatchObject({ status: 'working', result: undefined });
    expect(await other.finish(task.id, 2, { kind: 'completed', result: { by: 'second' } }, clock)).toBe(true);
    expect((await snapshot(store, task.id)).result).toEqual({ by: 'second' });
  });

  it('stops a run at its next step once its lease was taken over', async () => {
    const store = openStore();
    const other = openStore();
    const task = newTask();
    await store.create(task);
    const claimed = await store.claim('w1', LEASE, clock);
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
    clock += LEASE + 1;
    await other.claim('w2', LEASE, clock);
    proceed.open();
    await first.done;
    expect(fnRan).toBe(true); // the step ran, but its result was not recorded
    expect(stepError).toBeInstanceOf(LeaseLostError);
    const again = await other.claim('w3', LEASE, clock + LEASE + 1);
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
      const claimed = await store.claim('w1', LEASE, clock);
      if (claimed === undefined) throw new Error('nothing to claim');
      const r = run(deps, { ...claimed, ...flags });
      endings.push(
        await r.done.then(
          () => 'resolved',
          () => 'rejected',
        ),
      );
      await store.finish(claimed.id, claimed.token, { kind: 'released' }, clock);
    }
    expect(endings).toEqual(['resolved', 'resolved', 'resolved']);
    expect(errors).toHaveLength(3);
    expect(errors.every((e) => e instanceof StoreUnavailableError)).toBe(true);
  });
});
