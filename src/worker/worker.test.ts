// The worker on a real SQLite file with a fake TaskRunner (no protocol layer): claims, steps, cancels, takeovers.
import { describe, expect, it } from 'vitest';
import type { TaskRunner } from '../tasks/execution.js';
import type { ClaimedTask } from '../tasks/task.js';
import { ALICE } from '../../test/support/tasks.js';
import {
  aborted,
  advance,
  gate,
  LEASE,
  newTask,
  now,
  openStore,
  snapshot,
  statusIs,
  T0,
  useWorkerHarness,
  waitFor,
  worker,
} from '../../test/support/worker-harness.js';

useWorkerHarness();

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
    expect(await store.answer(task.id, ALICE, { confirm: { action: 'accept' } }, now())).toEqual({
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
    expect(await store.requestCancel(task.id, ALICE, now())).toEqual({
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
    expect(await other.requestCancel(task.id, ALICE, now())).toMatchObject({ ok: true, running: true });
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
    expect(await other.finish(task.id, 2, { kind: 'completed', result: { by: 'second' } }, now())).toBe(true);
    expect((await snapshot(store, task.id)).result).toEqual({ by: 'second' });
  });

  it('fails a task taken over after a crash when its tool must not re-run', async () => {
    const store = openStore();
    const task = newTask({ replayAfterCrash: false });
    await store.create(task);
    // A worker that crashed: it claimed the task and was never heard of again.
    expect(await store.claim('w-crashed', LEASE, now())).toMatchObject({ id: task.id, token: 1 });
    advance(LEASE + 1);
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
    const crashed = await store.claim('w-crashed', LEASE, now());
    await store.saveStep(task.id, crashed?.token ?? 0, 'first', 1, now());
    advance(LEASE + 1);
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

  it('wakes when a start one of its claims reserved under a rate limit comes due, not at its next poll', async () => {
    const store = openStore();
    const started = new Map<string, number>();
    const runner: TaskRunner = async (task) => {
      started.set(task.id, Date.now());
      return { kind: 'completed', result: {} };
    };
    // The backstop poll is a minute away: only the reserved start's wake-up can start the second task in time.
    worker({ store, runner, now: Date.now, pollMs: 60_000, leaseMs: 30_000 });
    const rateLimit = { key: 'sms', limit: 1, periodMs: 300 };
    const first = await store.create(newTask({ createdAt: Date.now(), rateLimit }));
    await waitFor(() => started.has(first.id), 'the first start');
    const second = await store.create(newTask({ createdAt: Date.now(), rateLimit }));
    await waitFor(() => started.has(second.id), 'the second start');
    const gap = (started.get(second.id) as number) - (started.get(first.id) as number);
    // Held back by the limit (its start reserved 300 ms after the first's claim); the runs' own start times lag their
    // claims by a few ms on a loaded machine, so the bound leaves room for that.
    expect(gap).toBeGreaterThanOrEqual(250);
    expect(gap).toBeLessThan(2_000);
  });
});
