// What runs show of their task: a replay (after a wait, a crash, on another process) shows no status message or
// progress behind what watchers were shown, and a run past that point shows everything again.
import { describe, expect, it } from 'vitest';
import { clockWithNow } from '../tasks/clock.js';
import type { ExecutionContext, TaskRunner } from '../tasks/execution.js';
import type { TaskStore } from '../tasks/store.js';
import type { TaskProgress } from '../tasks/task.js';
import { startRun, type RunningTask } from './run-task.js';
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
  waitFor,
} from '../../test/support/worker-harness.js';

useWorkerHarness();

/** A store that records the status messages and progress each run wrote (by its token). */
function recording(store: TaskStore) {
  const writes: { token: number; message: string; progress?: number }[] = [];
  const spied = Object.create(store) as TaskStore;
  spied.setStatusMessage = async (id, token, message, at, progress) => {
    const ok = await store.setStatusMessage(id, token, message, at, progress);
    if (ok)
      writes.push({ token, message, ...(progress === undefined ? {} : { progress: progress.progress }) });
    return ok;
  };
  const byRun = (token: number) => writes.filter((w) => w.token === token);
  return { store: spied, writes, byRun };
}

const show = (exec: ExecutionContext, progress: TaskProgress): void =>
  exec.progress(progress, `Working (${progress.progress}/${progress.total ?? '?'})`);

/** Claims the next task and runs it with `runner` until the run ends. */
async function runOnce(store: TaskStore, runner: TaskRunner): Promise<RunningTask> {
  const claimed = await store.claim('w', LEASE, now());
  if (claimed === undefined) throw new Error('nothing to claim');
  return track(startRun({ store, runner, leaseMs: LEASE, clock: clockWithNow(now) }, claimed));
}

describe('what runs show', () => {
  it('a replay writes nothing while recorded steps remain ahead of it, then goes on from there', async () => {
    const rec = recording(openStore());
    const task = newTask();
    await rec.store.create(task);
    const runner: TaskRunner = async (_t, exec) => {
      await exec.status('Starting.');
      for (let i = 0; i < 4; i++) {
        show(exec, { progress: i, total: 4 });
        await exec.step(`s${i}`, () => i);
        // The first run waits here; the second finds the wait over.
        if (i === 1) await exec.sleepUntil('pause', now() + 1_000);
      }
      return { kind: 'completed', result: {} };
    };
    await (
      await runOnce(rec.store, runner)
    ).done;
    expect((await snapshot(rec.store, task.id)).progress).toEqual({ progress: 1, total: 4 });
    advance(1_000);
    await (
      await runOnce(rec.store, runner)
    ).done;
    expect(rec.byRun(1).map((w) => w.progress ?? w.message)).toEqual(['Starting.', 0, 1]);
    // Replayed: Starting, 0 and 1 were shown; the run shows what comes after its recorded steps.
    expect(rec.byRun(2).map((w) => w.progress ?? w.message)).toEqual([2, 3]);
  });

  it('after a crash, shows no progress behind what was shown until it gets there', async () => {
    const rec = recording(openStore());
    const task = newTask();
    await rec.store.create(task);
    const crash = gate();
    let runs = 0;
    const runner: TaskRunner = async (_t, exec) => {
      runs += 1;
      await exec.step('fetch', () => 'rows');
      for (let i = 0; i <= 5; i++) {
        show(exec, { progress: i, total: 5 });
        // The first run dies after showing 3 (work without steps: a replay does it again).
        if (runs === 1 && i === 3) await crash.wait;
      }
      return { kind: 'completed', result: {} };
    };
    const first = await runOnce(rec.store, runner);
    await waitFor(async () => (await snapshot(rec.store, task.id)).progress?.progress === 3, 'progress 3');
    first.abort('lease-lost');
    crash.open();
    await first.done;
    advance(LEASE + 1);
    await (
      await runOnce(rec.store, runner)
    ).done;
    // On any process: what was shown is kept with the task. (4 may merge into 5 while 3 is being written.)
    const shown = rec.byRun(2).map((w) => w.progress);
    expect([
      [3, 4, 5],
      [3, 5],
    ]).toContainEqual(shown);
    // Written before the run's ending (even while the write of 3 is still being synced): the task ends showing it.
    expect((await snapshot(rec.store, task.id)).progress).toEqual({ progress: 5, total: 5 });
  });

  it('shows everything again once the run records a step of its own, behind what was shown or not', async () => {
    const rec = recording(openStore());
    const task = newTask();
    await rec.store.create(task);
    const crash = gate();
    let runs = 0;
    const runner: TaskRunner = async (_t, exec) => {
      runs += 1;
      await exec.step('copy', () => {
        show(exec, { progress: 8, total: 8 });
        return 'copied';
      });
      if (runs === 1) await crash.wait;
      // A second phase counts afresh.
      await exec.step('index', () => {
        show(exec, { progress: 1, total: 5 });
        return 'indexed';
      });
      show(exec, { progress: 2, total: 5 });
      return { kind: 'completed', result: {} };
    };
    const first = await runOnce(rec.store, runner);
    await waitFor(async () => (await snapshot(rec.store, task.id)).progress?.progress === 8, 'progress 8');
    first.abort('lease-lost');
    crash.open();
    await first.done;
    advance(LEASE + 1);
    await (
      await runOnce(rec.store, runner)
    ).done;
    // 1 is behind 8 and nothing new was recorded yet: held back. Once "index" is recorded, the run is past anything
    // shown before.
    expect(rec.byRun(2).map((w) => w.progress)).toEqual([2]);
  });

  it('shows a new run everything, and in call order', async () => {
    const rec = recording(openStore());
    const task = newTask();
    await rec.store.create(task);
    const runner: TaskRunner = async (_t, exec) => {
      show(exec, { progress: 5, total: 10 });
      show(exec, { progress: 6, total: 10 });
      await exec.status('Between.');
      show(exec, { progress: 1, total: 10 });
      await exec.step('s', () => 's');
      return { kind: 'completed', result: {} };
    };
    await (
      await runOnce(rec.store, runner)
    ).done;
    // 6 may merge into the status that follows it while 5 is being written (the message the later one, the progress
    // the latest given).
    const written = rec.byRun(1).map((w) => `${w.message}|${w.progress ?? ''}`);
    expect([
      ['Working (5/10)|5', 'Working (6/10)|6', 'Between.|', 'Working (1/10)|1'],
      ['Working (5/10)|5', 'Between.|6', 'Working (1/10)|1'],
    ]).toContainEqual(written);
    expect((await snapshot(rec.store, task.id)).progress).toEqual({ progress: 1, total: 10 });
  });
});
