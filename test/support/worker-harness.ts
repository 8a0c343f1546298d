// The ground of the worker's unit tests: a real SQLite file per test, a clock the test moves, and after each test
// every worker, run and store stopped, with no timer left behind.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
// The worker tests are composition roots: they wire the worker to a real store, as the CLI does.
import { createSqliteTaskStore } from '../../src/stores/sqlite/task-store.js';
import type { TaskStore } from '../../src/tasks/store.js';
import type { NewTask, TaskSnapshot } from '../../src/tasks/task.js';
import type { RunningTask } from '../../src/worker/run-task.js';
import { createWorker, type Worker, type WorkerOptions } from '../../src/worker/worker.js';
import { ALICE, workerTask } from './tasks.js';

export const T0 = 1_700_000_000_000;
export const LEASE = 200;

let clock: number;
export const now = (): number => clock;
/** Moves the tests' clock on. */
export const advance = (ms: number): void => {
  clock += ms;
};

export const newTask = (overrides: Partial<NewTask> = {}): NewTask => workerTask(clock, overrides);

let dir: string;
let stores: TaskStore[];
let workers: Worker[];
let runs: RunningTask[];
let gates: (() => void)[];
let baselineTimers: number;

const refTimers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Registers the hooks that set up and tear down each test of the file. */
export function useWorkerHarness(): void {
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
}

/** Another connection to the same file (as another process would have). */
export const openStore = () => {
  const store = createSqliteTaskStore({ path: join(dir, 'tasks.db') });
  stores.push(store);
  return store;
};

export const worker = (options: Partial<WorkerOptions> & Pick<WorkerOptions, 'store' | 'runner'>): Worker => {
  const w = createWorker({ leaseMs: LEASE, pollMs: 20, sweepMs: 60_000, now, ...options });
  workers.push(w);
  w.start();
  return w;
};

/** A run the test started itself, ended after the test. */
export const track = (run: RunningTask): RunningTask => {
  runs.push(run);
  return run;
};

/** A promise the test opens later; opened anyway in afterEach so no run hangs. */
export const gate = (): { wait: Promise<void>; open: () => void } => {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  gates.push(open);
  return { wait, open };
};

export const aborted = (signal: AbortSignal): Promise<void> =>
  signal.aborted
    ? Promise.resolve()
    : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));

export async function waitFor(
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

export async function snapshot(store: TaskStore, id: string): Promise<TaskSnapshot> {
  const got = await store.get(id, ALICE, clock);
  if (typeof got === 'string') throw new Error(`expected a snapshot of ${id}, got ${got}`);
  return got;
}

export const statusIs = (store: TaskStore, id: string, status: TaskSnapshot['status']) => async () =>
  (await snapshot(store, id)).status === status;
