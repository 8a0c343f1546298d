// Per-step concurrency (StepOptions.concurrency) run by real workers on both stores with a manual clock: a step
// waits for a slot of its key in process, then durably; steps and tasks of one key never pass its limit together.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// This test is a composition root: it wires workers to real stores, as the CLI does.
import { createSqliteTaskStore } from '../stores/sqlite/task-store.js';
import type { TaskRunner } from '../tasks/execution.js';
import type { TaskObserver } from '../tasks/observer.js';
import type { TaskStore } from '../tasks/store.js';
import type { TaskSnapshot } from '../tasks/task.js';
import { stepSlotWaitMessage, STEP_SLOT_WAIT_MS } from './step-slots.js';
import { createWorker, type Worker } from './worker.js';
import { ALICE, workerTask } from '../../test/support/tasks.js';
import { createManualClock, type ManualClock } from '../../test/support/manual-clock.js';
import { withPostgres } from '../../test/support/postgres.js';
import { usePostgresStores } from '../../test/support/postgres-stores.js';

const T0 = 1_700_000_000_000;
const PAYMENTS = { key: 'payments', limit: 1 };
const done = { kind: 'completed', result: { content: [] } } as const;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(probe: () => Promise<T | undefined> | T | undefined, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

function stepSlotSuite(name: string, openStore: () => TaskStore): void {
  describe(`per-step concurrency limits: ${name}`, () => {
    let clock: ManualClock;
    let workers: Worker[];
    beforeEach(() => {
      clock = createManualClock(T0);
      workers = [];
    });
    afterEach(async () => {
      for (const worker of workers.splice(0)) await worker.stop(1_000);
    });

    const startWorker = (
      store: TaskStore,
      runner: TaskRunner,
      concurrency = 1,
      observer?: TaskObserver,
    ): Worker => {
      const w = createWorker({
        store,
        runner,
        observer,
        clock,
        random: () => 0.5,
        leaseMs: 60_000,
        pollMs: 10,
        concurrency,
      });
      workers.push(w);
      w.start();
      return w;
    };
    const snapshot = async (store: TaskStore, id: string): Promise<TaskSnapshot> => {
      const got = await store.get(id, ALICE, clock.now());
      if (typeof got === 'string') throw new Error(`expected a snapshot of ${id}, got ${got}`);
      return got;
    };
    const ended = (store: TaskStore, id: string) => async () => {
      const s = await snapshot(store, id);
      return s.status === 'working' ? undefined : s;
    };
    const holdCall = (store: TaskStore, id: string) =>
      store.acquireSlot?.({ id, slot: PAYMENTS, until: T0 + 3_600_000 }, clock.now());

    it('waits in process while the key is full, and runs the step once a slot frees', async () => {
      const store = openStore();
      expect(await holdCall(store, 'call')).toBe(true);
      let ran = 0;
      const runner: TaskRunner = async (_task, exec) => {
        await exec.step('charge', () => void ran++, { concurrency: PAYMENTS });
        return done;
      };
      startWorker(store, runner);
      const task = await store.create(workerTask(T0));
      await sleep(100);
      expect(ran).toBe(0);
      await store.releaseSlot?.('call', clock.now());
      clock.advance(600); // the longest pause between two looks
      const finished = await until(ended(store, task.id), 'the task to end');
      expect(finished.status).toBe('completed');
      expect(ran).toBe(1);
    });

    it('then ends the run and waits durably, its worker freed, and tries again when it comes due', async () => {
      const store = openStore();
      expect(await holdCall(store, 'call')).toBe(true);
      let ran = 0;
      const runner: TaskRunner = async (_task, exec) => {
        await exec.step('charge', () => void ran++, { concurrency: PAYMENTS });
        return done;
      };
      const waits: string[] = [];
      const worker = startWorker(store, runner, 1, {
        waitEnded: (_run, wait, outcome) => waits.push(`${wait.kind} ${String(wait.name)} ${outcome}`),
      });
      const task = await store.create(workerTask(T0));
      await until(() => worker.active === 1 || undefined, 'the run to start');
      // Past the wait in process: the run ends, the task stays working, saying what it waits for.
      for (let waited = 0; waited <= STEP_SLOT_WAIT_MS && worker.active > 0; waited += 250) {
        clock.advance(250);
        await sleep(20);
      }
      await until(() => worker.active === 0 || undefined, 'the run to end');
      const waiting = await snapshot(store, task.id);
      expect(waiting).toMatchObject({
        status: 'working',
        statusMessage: stepSlotWaitMessage('payments', 'charge'),
      });
      expect(ran).toBe(0);
      expect(waits).toEqual(['slot charge parked']);
      // The slot frees; the task comes due and runs the step.
      await store.releaseSlot?.('call', clock.now());
      clock.advance(2_001);
      const finished = await until(ended(store, task.id), 'the task to end');
      expect(finished.status).toBe('completed');
      expect(ran).toBe(1);
    });

    it('never lets steps and tasks of one key pass its limit together', async () => {
      const store = openStore();
      const limit = { key: 'payments', limit: 2 };
      let active = 0;
      let most = 0;
      // Each body holds on until a second one is open (or 250 ms): on a loaded machine 15 ms bodies may never
      // overlap, and the test also asserts that the limit is reached.
      const busy = async (): Promise<void> => {
        most = Math.max(most, ++active);
        const held = Date.now() + 250;
        await sleep(15);
        while (most < 2 && Date.now() < held) await sleep(5);
        active--;
      };
      const runner: TaskRunner = async (task, exec) => {
        if (task.tool === 'whole') await busy();
        else await exec.step('charge', busy, { concurrency: limit });
        return done;
      };
      startWorker(store, runner, 6);
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) {
        const overrides = i % 3 === 0 ? { tool: 'whole', concurrency: limit } : {};
        ids.push((await store.create(workerTask(T0, overrides))).id);
      }
      const deadline = Date.now() + 20_000;
      const open = async () => {
        for (const id of ids) if ((await snapshot(store, id)).status === 'working') return true;
        return false;
      };
      while ((await open()) && Date.now() < deadline) {
        clock.advance(100);
        await store.freeSlots?.(clock.now());
        await sleep(10);
      }
      for (const id of ids) expect((await snapshot(store, id)).status).toBe('completed');
      expect(most).toBeLessThanOrEqual(2);
      expect(most).toBe(2);
    });

    it('holds no slot for a step already done, and frees it when the body settles', async () => {
      const store = openStore();
      let runs = 0;
      let freedAfterStep: boolean | undefined;
      const runner: TaskRunner = async (_task, exec) => {
        runs++;
        await exec.step('charge', () => 'paid', { concurrency: PAYMENTS });
        if (runs === 1) {
          // The slot is free again once the step is over: another holder takes it.
          freedAfterStep = await holdCall(store, 'after');
          await store.releaseSlot?.('after', clock.now());
        }
        await exec.sleepUntil('pause', T0 + 1_000);
        // On the replay the step is done: it takes no slot, even with the key full.
        return done;
      };
      startWorker(store, runner);
      const task = await store.create(workerTask(T0));
      await until(
        async () => (await snapshot(store, task.id)).statusMessage?.startsWith('Sleeping'),
        'the sleep',
      );
      expect(await holdCall(store, 'full')).toBe(true);
      clock.advance(1_000);
      const finished = await until(ended(store, task.id), 'the task to end');
      expect(finished.status).toBe('completed');
      expect([runs, freedAfterStep]).toEqual([2, true]);
    });
  });
}

let dir = '';
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'durable-mcp-step-slots-'));
});
const sqliteStores: TaskStore[] = [];
afterEach(async () => {
  for (const store of sqliteStores.splice(0)) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

stepSlotSuite('sqlite', () => {
  const store = createSqliteTaskStore({ path: join(dir, 'tasks.db') });
  sqliteStores.push(store);
  return store;
});

await withPostgres('the per-step concurrency tests on PostgreSQL', () => {
  const { open, freshSchema } = usePostgresStores('dmcp_step_slots');
  stepSlotSuite('postgres', () => open({ schema: freshSchema() }));
});
