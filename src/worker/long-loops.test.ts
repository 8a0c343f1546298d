// Tasks that loop for long, run by a real worker on a real SQLite file with a clock the test moves: sleeps are kept
// whatever the clock did while they were asked (so a replay takes the recorded path), histories of releases that
// did not keep a sleep already over still replay, and a step retried without end keeps getting finite waits.
import { describe, expect, it } from 'vitest';
import type { TaskRunner } from '../tasks/execution.js';
import type { TaskStore } from '../tasks/store.js';
import {
  advance,
  newTask,
  now,
  openStore,
  snapshot,
  T0,
  useWorkerHarness,
  waitFor,
  worker,
} from '../../test/support/worker-harness.js';

useWorkerHarness();

/** Settles a task's run: 'waiting' (with no lease, until after `after`), or its status once it ended. */
const settled = (store: TaskStore, id: string, after: number) => async (): Promise<string | undefined> => {
  const s = await snapshot(store, id);
  if (s.status === 'completed') return s.status;
  if (s.status !== 'working') return `${s.status}: ${s.statusMessage ?? ''}`;
  const t = await store.inspect?.(id, now());
  return t?.leaseOwner === undefined && (t?.wakeAt ?? 0) > after ? 'waiting' : undefined;
};

async function settle(store: TaskStore, id: string, after = now()): Promise<string> {
  let seen: string | undefined;
  await waitFor(async () => (seen = await settled(store, id, after)()) !== undefined, `task ${id} to settle`);
  return seen ?? '';
}

/** Runs a task's runs until it ends (each wait 1 ms of the test's clock), at most `runs` of them. */
async function runToEnd(store: TaskStore, id: string, runs: number): Promise<string> {
  for (let i = 0; i < runs; i++) {
    const state = await settle(store, id);
    if (state !== 'waiting') return state;
    advance(1);
  }
  throw new Error(`task ${id} still waiting after ${runs} runs`);
}

describe('sleeps in a loop', () => {
  it('keeps a sleep already over when it is looked at, so the replay takes the recorded path', async () => {
    const store = openStore();
    const orders: string[][] = [];
    const runner: TaskRunner = async (task, exec) => {
      orders.push([...task.stepOrder]);
      for (let i = 0; i < 3; i++) {
        const at = exec.now() + 1; // ctx.sleep(`poll:${i}`, 1)
        // The first time, the clock moves on before the sleep looks at it: that sleep is already over.
        if (orders.length === 1 && i === 0) advance(1);
        await exec.sleepUntil(`poll:${i}`, at);
      }
      return { kind: 'completed', result: { polls: 3 } };
    };
    worker({ store, runner });
    const task = newTask();
    await store.create(task);
    // Before, poll:0 went unrecorded; the replay found it not over yet, asked for it while the history's next step
    // was poll:1, and the task failed as non-deterministic.
    expect(await runToEnd(store, task.id, 5)).toBe('completed');
    expect(orders).toEqual([[], ['poll:0', 'poll:1'], ['poll:0', 'poll:1', 'poll:2']]);
  });

  it('replays a history of a release that did not keep sleeps already over', async () => {
    const store = openStore();
    const task = newTask();
    await store.create(task);
    // What that release recorded: the sleep past its date and the poll over when looked at were not kept.
    const held = await store.claim('earlier', 5_000, now());
    const token = held?.token ?? 0;
    expect(await store.saveStep(task.id, token, 'fetch', { rows: 3 }, now())).toBe(true);
    expect(await store.saveStep(task.id, token, 'poll:1', { wakeAt: now() + 1 }, now())).toBe(true);
    const waiting = { kind: 'waiting', until: now() + 1, statusMessage: 'Sleeping.' } as const;
    expect(await store.finish(task.id, token, waiting, now())).toBe(true);
    const bodies: string[] = [];
    const orders: string[][] = [];
    const runner: TaskRunner = async (claimed, exec) => {
      orders.push([...claimed.stepOrder]);
      await exec.sleepUntil('until-monday', T0 - 60_000);
      await exec.step('fetch', () => bodies.push('fetch'));
      for (let i = 0; i < 3; i++) await exec.sleepUntil(`poll:${i}`, exec.now() + 1);
      return { kind: 'completed', result: {} };
    };
    advance(1);
    worker({ store, runner });
    expect(await runToEnd(store, task.id, 5)).toBe('completed');
    expect(bodies).toEqual([]);
    // The sleeps the history lacks are over, as they were then, and stay unrecorded; the new one is kept.
    expect(orders).toEqual([
      ['fetch', 'poll:1'],
      ['fetch', 'poll:1', 'poll:2'],
    ]);
  });
});

describe('retries without end', () => {
  it('schedules attempt 1,101 of a step retried without end and without delay a second later', async () => {
    const store = openStore();
    const task = newTask();
    await store.create(task);
    // The task's history: 1,099 failed attempts of the step (as if run back to back), its lease then handed back.
    const held = await store.claim('earlier', 5_000, T0);
    const failure = { attempt: 1_099, name: 'Error', message: 'down', at: T0, final: false };
    expect(await store.saveStepFailure(task.id, held?.token ?? 0, 'poll', failure, T0)).toBe(true);
    const waiting = { kind: 'waiting', until: T0, statusMessage: 'Retrying.' } as const;
    expect(await store.finish(task.id, held?.token ?? 0, waiting, T0)).toBe(true);
    const attempts: number[] = [];
    const runner: TaskRunner = async (_task, exec) => {
      await exec.step(
        'poll',
        ({ attempt }) => {
          attempts.push(attempt);
          throw new Error('down');
        },
        { retry: { maxAttempts: Infinity, initialDelayMs: 0 } },
      );
      return { kind: 'completed', result: {} };
    };
    worker({ store, runner });
    // Before, the wait after attempt 1,024 or so came out NaN, and the task ended "Invalid time value".
    expect(await settle(store, task.id, T0)).toBe('waiting');
    expect(attempts).toEqual([1_100]);
    const wakeAt = (await store.inspect?.(task.id, now()))?.wakeAt;
    expect(wakeAt).toBe(T0 + 1_000);
    expect((await snapshot(store, task.id)).statusMessage).toBe(
      `Retrying step "poll" (attempt 1101) at ${new Date(T0 + 1_000).toISOString()}.`,
    );
  });
});
