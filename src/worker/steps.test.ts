// Step retries, timeouts and durable sleeps, run by real workers on a real SQLite file with a manual clock: no test
// waits for time to pass, it moves the clock.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// This test is a composition root: it wires workers to a real store, as the CLI does.
import { createSqliteTaskStore } from '../stores/sqlite/task-store.js';
import { StepTimeoutError, type TaskRunner } from '../tasks/execution.js';
import { NonRetryableError } from '../tasks/retry.js';
import type { TaskStore } from '../tasks/store.js';
import type { TaskSnapshot } from '../tasks/task.js';
import type { TaskInspection } from '../tasks/inspection.js';
import { createWorker, type Worker } from './worker.js';
import { ALICE, workerTask } from '../../test/support/tasks.js';
import { createManualClock, type ManualClock } from '../../test/support/manual-clock.js';

const T0 = 1_700_000_000_000;

let clock: ManualClock;
let dir: string;
let stores: TaskStore[];
let workers: Worker[];

beforeEach(() => {
  clock = createManualClock(T0);
  dir = mkdtempSync(join(tmpdir(), 'durable-mcp-steps-'));
  stores = [];
  workers = [];
});

afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.stop(1_000);
  for (const store of stores.splice(0)) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const openStore = () => {
  const store = createSqliteTaskStore({ path: join(dir, 'tasks.db') });
  stores.push(store);
  return store;
};

const startWorker = (store: TaskStore, runner: TaskRunner): Worker => {
  const w = createWorker({
    store,
    runner,
    clock,
    random: () => 0.5,
    leaseMs: 5_000,
    pollMs: 10,
    sweepMs: 60_000,
  });
  workers.push(w);
  w.start();
  return w;
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(probe: () => Promise<T | undefined> | T | undefined, what: string): Promise<T> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

async function snapshot(store: TaskStore, id: string): Promise<TaskSnapshot> {
  const got = await store.get(id, ALICE, clock.now());
  if (typeof got === 'string') throw new Error(`expected a snapshot of ${id}, got ${got}`);
  return got;
}

const inspect = async (store: TaskStore, id: string): Promise<TaskInspection> =>
  (await store.inspect?.(id, clock.now())) ?? Promise.reject(new Error(`no task ${id}`));

/** The task is waiting (no lease) until some time: that time. */
const waitingUntil = (store: TaskStore, id: string) => async (): Promise<number | undefined> => {
  const t = await inspect(store, id);
  return t.wakeAt !== undefined && t.leaseOwner === undefined ? t.wakeAt : undefined;
};

const ended = (store: TaskStore, id: string) => async (): Promise<TaskSnapshot | undefined> => {
  const s = await snapshot(store, id);
  return s.status === 'working' || s.status === 'input_required' ? undefined : s;
};

/** Moves the clock to `at` and lets the worker that wakes then start its run. */
const advanceTo = (at: number): void => clock.advance(at - clock.now());

describe('step retries', () => {
  it('retries a failing step with backoff, waiting in the store between attempts, until one succeeds', async () => {
    const store = openStore();
    const attempts: number[] = [];
    const runner: TaskRunner = async (_task, exec) => {
      const value = await exec.step(
        'flaky',
        ({ attempt }) => {
          attempts.push(attempt);
          if (attempt < 4) throw new Error(`boom ${attempt}`);
          clock.advance(12); // the successful attempt takes 12 ms
          return `ok after ${attempt}`;
        },
        { retry: { maxAttempts: 5, initialDelayMs: 1_000, backoffFactor: 2, jitter: 0 } },
      );
      return { kind: 'completed', result: { value } };
    };
    const worker = startWorker(store, runner);
    const task = workerTask(T0);
    await store.create(task);
    const waits: number[] = [];
    for (const attempt of [1, 2, 3]) {
      const failedAt = clock.now();
      const wakeAt = await until(waitingUntil(store, task.id), `the wait after attempt ${attempt}`);
      waits.push(wakeAt - failedAt);
      expect(attempts).toEqual([1, 2, 3].slice(0, attempt));
      // No slot, lease or run is held during the wait (the run ends once its ending is durable, which the store's
      // operator view may show up to one WAL sync earlier).
      await until(() => worker.active === 0, `the run to end before attempt ${attempt + 1}`);
      expect((await snapshot(store, task.id)).statusMessage).toMatch(
        new RegExp(`^Retrying step "flaky" \\(attempt ${attempt + 1} of 5\\) at `),
      );
      // Not a moment early.
      advanceTo(wakeAt - 1);
      await sleep(30);
      expect(attempts).toHaveLength(attempt);
      advanceTo(wakeAt);
      await until(() => attempts.length > attempt, `attempt ${attempt + 1}`);
    }
    const done = await until(ended(store, task.id), 'completion');
    expect(done).toMatchObject({ status: 'completed', result: { value: 'ok after 4' } });
    expect(waits).toEqual([1_000, 2_000, 4_000]);
    expect(attempts).toEqual([1, 2, 3, 4]);
    const inspected = await inspect(store, task.id);
    // The step's timings are those of its successful attempt, after the waits.
    expect(inspected.steps).toEqual([
      {
        name: 'flaky',
        done: true,
        failedAttempts: 3,
        lastFailure: expect.objectContaining({ attempt: 3, message: 'boom 3', final: false }),
        startedAt: clock.now() - 12,
        savedAt: clock.now(),
      },
    ]);
    // Waiting between attempts is no change of status: created working, then completed.
    expect(inspected.history?.map((e) => e.status)).toEqual(['working', 'completed']);
  });

  it('stops at once on a non-retryable error (class or predicate) and hands it to the handler', async () => {
    const store = openStore();
    const attempts: string[] = [];
    const caught: string[] = [];
    const retry = {
      maxAttempts: 5,
      initialDelayMs: 10,
      nonRetryable: (e: unknown) => String(e).includes('400'),
    };
    const runner: TaskRunner = async (_task, exec) => {
      for (const [name, err] of [
        ['a', new NonRetryableError('bad input')],
        ['b', new Error('HTTP 400')],
      ] as const) {
        try {
          await exec.step(
            name,
            () => {
              attempts.push(name);
              throw err;
            },
            { retry },
          );
        } catch (e) {
          caught.push((e as Error).message);
        }
      }
      return { kind: 'completed', result: { caught } };
    };
    startWorker(store, runner);
    const task = workerTask(T0);
    await store.create(task);
    const done = await until(ended(store, task.id), 'completion');
    expect(done.result).toEqual({ caught: ['bad input', 'HTTP 400'] });
    expect(attempts).toEqual(['a', 'b']);
    const steps = (await inspect(store, task.id)).steps;
    expect(steps.map((s) => [s.name, s.failedAttempts, s.lastFailure?.final])).toEqual([
      ['a', 1, true],
      ['b', 1, true],
    ]);
  });

  it('ends an attempt that outlives timeoutMs, counts it as failed, and never stores its late result', async () => {
    const store = openStore();
    const signals: AbortSignal[] = [];
    const late: ((v: string) => void)[] = [];
    let handlerSaw: unknown;
    const runner: TaskRunner = async (_task, exec) => {
      try {
        await exec.step(
          'hang',
          ({ signal }) => {
            signals.push(signal);
            return new Promise<string>((resolve) => late.push(resolve));
          },
          { timeoutMs: 500, retry: { maxAttempts: 2, initialDelayMs: 100, jitter: 0 } },
        );
      } catch (err) {
        handlerSaw = err;
      }
      return { kind: 'completed', result: { timedOut: handlerSaw instanceof StepTimeoutError } };
    };
    startWorker(store, runner);
    const task = workerTask(T0);
    await store.create(task);
    await until(() => signals.length === 1, 'the first attempt');
    clock.advance(499);
    await sleep(20);
    expect(signals[0]?.aborted).toBe(false);
    clock.advance(1);
    expect(signals[0]?.aborted).toBe(true);
    expect(signals[0]?.reason).toBeInstanceOf(StepTimeoutError);
    const wakeAt = await until(waitingUntil(store, task.id), 'the retry wait');
    advanceTo(wakeAt);
    await until(() => signals.length === 2, 'the second attempt');
    clock.advance(500);
    const done = await until(ended(store, task.id), 'completion');
    expect(done.result).toEqual({ timedOut: true });
    expect(String((handlerSaw as Error).message)).toBe('step "hang" timed out after 500 ms');
    // The abandoned attempts answer now: nothing is stored.
    for (const resolve of late) resolve('too late');
    await sleep(20);
    expect((await inspect(store, task.id)).steps).toEqual([
      expect.objectContaining({ name: 'hang', done: false, failedAttempts: 2 }),
    ]);
  });

  it('replays a step that failed for good as the same error, without running it again', async () => {
    const store = openStore();
    let bodies = 0;
    let runs = 0;
    const runner: TaskRunner = async (task, exec) => {
      runs++;
      let message = '';
      try {
        await exec.step('once', () => {
          bodies++;
          throw new TypeError('no such table');
        });
      } catch (err) {
        message = `${(err as Error).name}: ${(err as Error).message}`;
      }
      if (task.answers.go === undefined)
        return { kind: 'input_required', requests: { go: { method: 'elicitation/create' } } };
      return { kind: 'completed', result: { message } };
    };
    startWorker(store, runner);
    const task = workerTask(T0);
    await store.create(task);
    await until(async () => (await snapshot(store, task.id)).status === 'input_required', 'the question');
    await store.answer(task.id, ALICE, { go: { action: 'accept' } }, clock.now());
    const done = await until(ended(store, task.id), 'completion');
    expect(done.result).toEqual({ message: 'TypeError: no such table' });
    expect([runs, bodies]).toEqual([2, 1]);
  });

  it('ends a task cancelled at once when the cancel comes during a backoff wait', async () => {
    const store = openStore();
    let attempts = 0;
    const runner: TaskRunner = async (_task, exec) => {
      await exec.step(
        'x',
        () => {
          attempts++;
          throw new Error('down');
        },
        { retry: { maxAttempts: 3, initialDelayMs: 60_000 } },
      );
      return { kind: 'completed', result: {} };
    };
    startWorker(store, runner);
    const task = workerTask(T0);
    await store.create(task);
    await until(waitingUntil(store, task.id), 'the wait');
    expect(await store.requestCancel(task.id, ALICE, clock.now())).toEqual({
      ok: true,
      cancelledNow: true,
      running: false,
    });
    expect((await snapshot(store, task.id)).status).toBe('cancelled');
    clock.advance(120_000);
    await sleep(50);
    expect(attempts).toBe(1);
  });
});

describe('durable sleeps', () => {
  const napper = (log: string[]): TaskRunner => {
    return async (_task, exec) => {
      await exec.step('before', () => {
        log.push('before');
        return 1;
      });
      await exec.sleepUntil('nap', exec.now() + 10_000);
      log.push('woke');
      return { kind: 'completed', result: { slept: true } };
    };
  };

  it('sleeps without a worker, survives the worker stopping, and wakes on another on time', async () => {
    const first = openStore();
    const log: string[] = [];
    const a = startWorker(first, napper(log));
    const task = workerTask(T0);
    await first.create(task);
    const wakeAt = await until(waitingUntil(first, task.id), 'the sleep');
    expect(wakeAt).toBe(T0 + 10_000);
    // The run ends once its ending is durable; the operator view may show it up to one WAL sync earlier.
    await until(() => a.active === 0, 'the run to end');
    expect((await snapshot(first, task.id)).statusMessage).toBe(
      `Sleeping until ${new Date(T0 + 10_000).toISOString()}.`,
    );
    await a.stop();
    // Another process (a second connection with its own worker) takes over; the first never comes back.
    const second = openStore();
    startWorker(second, napper(log));
    clock.advance(9_999);
    await sleep(40);
    expect(log).toEqual(['before']);
    clock.advance(1);
    const done = await until(ended(second, task.id), 'the wake-up');
    expect(done).toMatchObject({ status: 'completed', result: { slept: true } });
    expect(log).toEqual(['before', 'woke']);
  });

  it('ends a sleeping task cancelled at once', async () => {
    const store = openStore();
    const log: string[] = [];
    startWorker(store, napper(log));
    const task = workerTask(T0);
    await store.create(task);
    await until(waitingUntil(store, task.id), 'the sleep');
    await store.requestCancel(task.id, ALICE, clock.now());
    expect((await snapshot(store, task.id)).status).toBe('cancelled');
    clock.advance(20_000);
    await sleep(40);
    expect(log).toEqual(['before']);
  });

  it('ends the run waiting even when the handler swallows the wait, and starts no step after it', async () => {
    const store = openStore();
    const log: string[] = [];
    const runner: TaskRunner = async (_task, exec) => {
      try {
        await exec.sleepUntil('nap', exec.now() + 1_000);
      } catch {
        // swallowed
      }
      await exec.step('after', () => log.push('after')).catch(() => undefined);
      return { kind: 'completed', result: { log } };
    };
    startWorker(store, runner);
    const task = workerTask(T0);
    await store.create(task);
    const wakeAt = await until(waitingUntil(store, task.id), 'the sleep');
    expect(log).toEqual([]);
    advanceTo(wakeAt);
    const done = await until(ended(store, task.id), 'completion');
    expect(done.result).toEqual({ log: ['after'] });
  });
});
