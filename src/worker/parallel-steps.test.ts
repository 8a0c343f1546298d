// Steps started together (Promise.all, ctx.map) on both stores: a run that stops after any of its kept steps is taken
// over and replayed without running a kept step again or leaving its history, a step failing with attempts left
// retries alone while the steps beside it keep their values, and the status names the steps running in parallel.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// This test is a composition root: it wires runs to real stores, as the CLI does.
import { createSqliteTaskStore } from '../stores/sqlite/task-store.js';
import type { ExecutionContext, TaskRunner } from '../tasks/execution.js';
import { mapSteps } from '../tasks/step-map.js';
import type { TaskStore } from '../tasks/store.js';
import type { JsonValue, RunOutcome, TaskSnapshot } from '../tasks/task.js';
import { startRun } from './run-task.js';
import { ALICE, workerTask } from '../../test/support/tasks.js';
import { createManualClock, type ManualClock } from '../../test/support/manual-clock.js';
import { withPostgres } from '../../test/support/postgres.js';
import { usePostgresStores } from '../../test/support/postgres-stores.js';

const T0 = 1_700_000_000_000;
const LEASE = 60_000; // a quiet heartbeat: only the test ends a run's lease
const PARALLEL = 3;
const ITEMS = [5, 1, 4, 2, 3];

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Two connections to one store, as two processes have. */
type OpenPair = () => [TaskStore, TaskStore];

/**
 * The store as a run of a process that dies (its lease lost) right after its `after`th step is kept: from then on
 * every write of the run is refused, as the store refuses a run whose lease was taken. Records what it kept.
 */
function dyingStore(store: TaskStore, after: number) {
  const kept: string[] = [];
  const writes: Promise<unknown>[] = [];
  // Writes are counted as they are sent: none after the `after`th step's, even one sent while it is in flight.
  let sent = 0;
  const dead = (): boolean => sent >= after;
  const spy = Object.create(store) as TaskStore;
  spy.saveStep = async (id, token, name, ...rest) => {
    if (dead()) return false;
    sent++;
    const saving = store.saveStep(id, token, name, ...rest);
    writes.push(saving);
    const ok = await saving;
    if (ok) kept.push(name);
    return ok;
  };
  spy.saveStepFailure = async (...args) => (dead() ? false : store.saveStepFailure(...args));
  spy.setStatusMessage = async (...args) => (dead() ? false : store.setStatusMessage(...args));
  spy.finish = async (...args) => (dead() ? false : store.finish(...args));
  spy.renew = async (...args) => (dead() ? { held: false, cancelRequested: false } : store.renew(...args));
  /** Resolves once the writes sent before the death are done (the run may end before the last one is). */
  const settled = async (): Promise<void> => void (await Promise.allSettled(writes));
  return { store: spy, kept, settled };
}

/** The store, counting the status writes of runs. */
function countingStatus(store: TaskStore) {
  const messages: string[] = [];
  const spy = Object.create(store) as TaskStore;
  spy.setStatusMessage = async (id, token, message, ...rest) => {
    messages.push(message);
    return store.setStatusMessage(id, token, message, ...rest);
  };
  return { store: spy, messages };
}

function parallelSuite(name: string, openPair: OpenPair): void {
  describe(`parallel steps: ${name}`, () => {
    let clock: ManualClock;
    beforeEach(() => {
      clock = createManualClock(T0);
    });

    /** Claims the task through `store` and runs it to its end. */
    const runOnce = async (store: TaskStore, runner: TaskRunner, worker: string): Promise<void> => {
      const claimed = await store.claim(worker, LEASE, clock.now());
      if (claimed === undefined) throw new Error(`${worker} found nothing to claim`);
      await startRun({ store, runner, clock, leaseMs: LEASE, random: () => 0.5 }, claimed).done;
    };
    const snapshot = async (store: TaskStore, id: string): Promise<TaskSnapshot> => {
      const got = await store.get(id, ALICE, clock.now());
      if (typeof got === 'string') throw new Error(`expected a snapshot of ${id}, got ${got}`);
      return got;
    };
    const keptSteps = async (store: TaskStore, id: string): Promise<string[]> => {
      const inspection = await store.inspect?.(id, clock.now());
      return (inspection?.steps ?? []).filter((s) => s.done).map((s) => s.name);
    };

    /** A counted step body that takes `ms` and returns `value`. */
    const counted =
      (runs: Map<string, number>, step: string, ms: number, value: JsonValue) =>
      async (): Promise<JsonValue> => {
        runs.set(step, (runs.get(step) ?? 0) + 1);
        await sleep(ms);
        return value;
      };

    /**
     * Runs the task on a process that dies after each count of kept steps in turn, then on another process that
     * takes it over: every step kept before the death ran once, every other once more at most, and the task ends
     * with the result of an undisturbed run.
     */
    const crashEverywhere = async (
      handler: (exec: ExecutionContext, runs: Map<string, number>) => Promise<JsonValue>,
      steps: number,
    ): Promise<void> => {
      const expected = await handler(
        {
          step: async (_n, fn) => fn({ signal: new AbortController().signal, attempt: 1 }),
        } as ExecutionContext,
        new Map(),
      );
      for (let after = 0; after <= steps; after++) {
        const [first, second] = openPair();
        const task = workerTask(clock.now());
        await first.create(task);
        const runs: [Map<string, number>, Map<string, number>] = [new Map(), new Map()];
        const runner =
          (i: 0 | 1): TaskRunner =>
          async (_task, exec): Promise<RunOutcome> => ({
            kind: 'completed',
            result: { value: await handler(exec, runs[i]) },
          });
        const dying = dyingStore(first, after);
        await runOnce(dying.store, runner(0), 'w1');
        await dying.settled();
        expect(dying.kept, `the run that died after ${after} kept steps`).toHaveLength(after);
        expect((await snapshot(first, task.id)).status).toBe('working');
        clock.advance(LEASE + 1);
        await runOnce(second, runner(1), 'w2');
        const ended = await snapshot(second, task.id);
        expect(ended.status, `taken over after ${after} kept steps: ${ended.statusMessage}`).toBe(
          'completed',
        );
        expect((await snapshot(second, task.id)).result).toEqual({ value: expected });
        const all = await keptSteps(second, task.id);
        expect(all).toHaveLength(steps);
        for (const step of all) {
          const [before, again] = [runs[0].get(step) ?? 0, runs[1].get(step) ?? 0];
          if (dying.kept.includes(step)) expect([step, before, again]).toEqual([step, 1, 0]);
          else expect([step, again, before <= 1]).toEqual([step, 1, true]);
        }
      }
    };

    it('replays steps run in parallel after a crash at every step boundary, running none kept again', async () => {
      // The parallel steps end in the reverse of their order of calls: the history keeps them as they ended.
      await crashEverywhere(async (exec, runs) => {
        const base = (await exec.step('before', counted(runs, 'before', 1, 10))) as number;
        const parts = await Promise.all(
          Array.from({ length: PARALLEL }, (_, i) =>
            exec.step(`part${i}`, counted(runs, `part${i}`, (PARALLEL - i) * 8, base + i)),
          ),
        );
        const sum = (await exec.step('after', counted(runs, 'after', 1, parts.join('+')))) as string;
        return { parts, sum };
      }, PARALLEL + 2);
    });

    it('replays a map after a crash at every step boundary: kept items first, then the others', async () => {
      await crashEverywhere(async (exec, runs) => {
        const base = (await exec.step('before', counted(runs, 'before', 1, 100))) as number;
        const map = { step: exec.step.bind(exec), plan: exec.planSteps?.bind(exec) ?? (() => []) };
        const doubled = await mapSteps(
          map,
          'double',
          ITEMS,
          (item, index) => counted(runs, `double[${index}]`, item * 4, base + item * 2)(),
          { concurrency: 2 },
        );
        const total = await exec.step('after', counted(runs, 'after', 1, doubled.length));
        return { doubled, total };
      }, ITEMS.length + 2);
    });

    it('retries a failing parallel step alone: the steps beside it keep their values and do not run again', async () => {
      const [first, second] = openPair();
      const task = workerTask(clock.now());
      await first.create(task);
      const runs = new Map<string, number>();
      const runner: TaskRunner = async (_task, exec) => {
        const values = await Promise.all([
          exec.step('slow', counted(runs, 'slow', 20, 'slow')),
          exec.step(
            'flaky',
            async ({ attempt }) => {
              runs.set('flaky', attempt);
              if (attempt === 1) throw new Error('not yet');
              return 'flaky';
            },
            { retry: { maxAttempts: 3, initialDelayMs: 1_000, jitter: 0 } },
          ),
          exec.step('slower', counted(runs, 'slower', 40, 'slower')),
        ]);
        return { kind: 'completed', result: { values } };
      };
      await runOnce(first, runner, 'w1');
      const waiting = await first.inspect?.(task.id, clock.now());
      expect(waiting?.status).toBe('working');
      expect(waiting?.wakeAt).toBe(T0 + 1_000);
      expect(waiting?.statusMessage).toMatch(/^Retrying step "flaky" \(attempt 2 of 3\)/);
      expect((await keptSteps(first, task.id)).sort()).toEqual(['slow', 'slower']);
      clock.advance(1_000);
      await runOnce(second, runner, 'w2');
      expect((await snapshot(second, task.id)).status).toBe('completed');
      expect((await snapshot(second, task.id)).result).toEqual({ values: ['slow', 'flaky', 'slower'] });
      expect(Object.fromEntries(runs)).toEqual({ slow: 1, flaky: 2, slower: 1 });
    });

    it('retries a failing map item alone: the items kept beside it replay from the store', async () => {
      const [first, second] = openPair();
      const task = workerTask(clock.now());
      await first.create(task);
      const runs = new Map<string, number>();
      const runner: TaskRunner = async (_task, exec) => {
        const map = { step: exec.step.bind(exec), plan: exec.planSteps?.bind(exec) ?? (() => []) };
        const values = await mapSteps(
          map,
          'item',
          ['a', 'b', 'c', 'd'],
          async (item, index, { attempt }) => {
            runs.set(item, (runs.get(item) ?? 0) + 1);
            if (item === 'b' && attempt === 1) throw new Error('not yet');
            await sleep(index === 0 ? 30 : 1); // a is still running when b fails
            return item.toUpperCase();
          },
          { concurrency: 2, retry: { maxAttempts: 2, initialDelayMs: 500, jitter: 0 } },
        );
        return { kind: 'completed', result: { values } };
      };
      await runOnce(first, runner, 'w1');
      // b failed while a ran beside it: nothing new started after, and a was kept.
      expect(await keptSteps(first, task.id)).toEqual(['item[0]']);
      clock.advance(500);
      await runOnce(second, runner, 'w2');
      expect((await snapshot(second, task.id)).result).toEqual({ values: ['A', 'B', 'C', 'D'] });
      expect(Object.fromEntries(runs)).toEqual({ a: 1, b: 2, c: 1, d: 1 });
    });

    it('names the steps running in parallel in the status, and writes none for steps run one at a time', async () => {
      const [plain] = openPair();
      const { store, messages } = countingStatus(plain);
      const task = workerTask(clock.now());
      await store.create(task);
      const opened: Record<string, () => void> = {};
      const gate = (step: string) => () =>
        new Promise<string>((resolve) => (opened[step] = () => resolve(step)));
      const runner: TaskRunner = async (_task, exec) => {
        for (let i = 0; i < 5; i++) await exec.step(`one${i}`, () => i);
        await Promise.all([exec.step('a', gate('a')), exec.step('b', gate('b')), exec.step('c', gate('c'))]);
        return { kind: 'completed', result: {} };
      };
      const claimed = await store.claim('w1', LEASE, clock.now());
      if (claimed === undefined) throw new Error('nothing to claim');
      const run = startRun({ store, runner, clock, leaseMs: LEASE }, claimed);
      const statusIs = async (message: string): Promise<void> => {
        for (let i = 0; i < 400 && (await snapshot(store, task.id)).statusMessage !== message; i++)
          await sleep(5);
        expect((await snapshot(store, task.id)).statusMessage).toBe(message);
      };
      await statusIs('Running steps "a", "b", "c" (3 in parallel).');
      opened.a?.();
      await statusIs('Running steps "b", "c" (2 in parallel).');
      opened.c?.();
      await statusIs('Running step "b".');
      opened.b?.();
      await run.done;
      expect((await snapshot(store, task.id)).status).toBe('completed');
      // One write for each change of what runs in parallel; none for the five steps run one at a time.
      expect(messages).toEqual([
        'Running steps "a", "b", "c" (3 in parallel).',
        'Running steps "b", "c" (2 in parallel).',
        'Running step "b".',
      ]);
      // A replay of the same steps (all kept) shows nothing.
      messages.length = 0;
      const again = workerTask(clock.now());
      await store.create(again);
      const replayed: TaskRunner = async (_task, exec) => {
        const both = sleep(5); // the two bodies end together: nothing is shown of one running alone
        await Promise.all([exec.step('x', () => both), exec.step('y', () => both)]);
        return { kind: 'waiting', until: clock.now() + 1_000, statusMessage: 'Later.' };
      };
      await runOnce(store, replayed, 'w1');
      expect(messages).toEqual(['Running steps "x", "y" (2 in parallel).']);
      messages.length = 0;
      clock.advance(1_000);
      await runOnce(store, replayed, 'w1');
      expect(messages).toEqual([]);
    });
  });
}

let dir = '';
const sqliteStores: TaskStore[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'durable-mcp-parallel-'));
});
afterEach(async () => {
  for (const store of sqliteStores.splice(0)) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

let files = 0;
parallelSuite('sqlite', () => {
  const path = join(dir, `tasks-${files++}.db`);
  const pair: [TaskStore, TaskStore] = [createSqliteTaskStore({ path }), createSqliteTaskStore({ path })];
  sqliteStores.push(...pair);
  return pair;
});

await withPostgres('the parallel steps tests on PostgreSQL', () => {
  const { open, freshSchema } = usePostgresStores('dmcp_parallel');
  parallelSuite('postgres', () => {
    const schema = freshSchema();
    return [open({ schema }), open({ schema })];
  });
});
