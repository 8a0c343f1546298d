// What a run tells its observer: its start and end (with whether the ending write was made), retried steps, and
// claims that end the task without running its tool.
import { describe, expect, it } from 'vitest';
import { clockWithNow } from '../tasks/clock.js';
import type { TaskRunner } from '../tasks/execution.js';
import type { TaskObserver } from '../tasks/observer.js';
import type { ClaimedTask } from '../tasks/task.js';
import { startRun } from './run-task.js';
import {
  advance,
  LEASE,
  newTask,
  now,
  openStore,
  snapshot,
  track,
  useWorkerHarness,
} from '../../test/support/worker-harness.js';

useWorkerHarness();

/** An observer that writes down what it is told, one line per call. */
function recorder() {
  const calls: string[] = [];
  const observer: TaskObserver = {
    runStarted: (run) => calls.push(`started ${run.tool}${run.takenOver ? ' taken over' : ''}`),
    runFinished: (run, outcome, ms, written) => {
      expect(ms).toBeGreaterThanOrEqual(0);
      calls.push(`finished ${run.tool} ${outcome}${written ? '' : ' unwritten'}`);
    },
    stepRetried: (run, step, attempt) => calls.push(`retried ${run.tool} ${step} #${attempt}`),
  };
  return { calls, observer };
}

async function claimOne(store: ReturnType<typeof openStore>, tool = 'echo'): Promise<ClaimedTask> {
  await store.create(newTask({ tool }));
  const claimed = await store.claim('w1', LEASE, now());
  if (claimed === undefined) throw new Error('nothing to claim');
  return claimed;
}

describe('a run and its observer', () => {
  it('reports a failed step attempt that will be retried, then the run ending waiting', async () => {
    const store = openStore();
    const { calls, observer } = recorder();
    const runner: TaskRunner = async (_task, exec) => {
      await exec.step(
        'flaky',
        () => {
          throw new Error('boom');
        },
        { retry: { maxAttempts: 2, initialDelayMs: 1_000, jitter: 0 } },
      );
      return { kind: 'completed', result: {} };
    };
    const claimed = await claimOne(store, 'fetch_page');
    await track(startRun({ store, runner, leaseMs: 60_000, clock: clockWithNow(now), observer }, claimed))
      .done;
    expect(calls).toEqual([
      'started fetch_page',
      'retried fetch_page flaky #1',
      'finished fetch_page waiting',
    ]);
    // The last attempt fails for good: no retry reported, the task fails.
    advance(1_000);
    const again = await store.claim('w1', LEASE, now());
    if (again === undefined) throw new Error('nothing to claim');
    calls.length = 0;
    await track(startRun({ store, runner, leaseMs: 60_000, clock: clockWithNow(now), observer }, again)).done;
    expect(calls).toEqual(['started fetch_page', 'finished fetch_page failed']);
    expect((await snapshot(store, claimed.id)).status).toBe('failed');
  });

  it('reports claims that end the task without running its tool', async () => {
    const store = openStore();
    const { calls, observer } = recorder();
    let ran = 0;
    const runner: TaskRunner = async () => {
      ran++;
      return { kind: 'completed', result: {} };
    };
    const deps = { store, runner, leaseMs: 60_000, clock: clockWithNow(now), observer };
    const cancelled = await claimOne(store);
    await track(startRun(deps, { ...cancelled, cancelRequested: true })).done;
    const crashed = await claimOne(store);
    await track(startRun(deps, { ...crashed, takenOver: true, replayAfterCrash: false })).done;
    expect(ran).toBe(0);
    expect(calls).toEqual([
      'started echo',
      'finished echo cancelled',
      'started echo taken over',
      'finished echo failed',
    ]);
  });

  it('reports a run whose lease was taken over as ended without its write', async () => {
    const store = openStore();
    const other = openStore();
    const { calls, observer } = recorder();
    const claimed = await claimOne(store);
    const runner: TaskRunner = async () => {
      advance(LEASE + 1);
      await other.claim('w2', LEASE, now());
      return { kind: 'completed', result: {} };
    };
    await track(startRun({ store, runner, leaseMs: 60_000, clock: clockWithNow(now), observer }, claimed))
      .done;
    expect(calls).toEqual(['started echo', 'finished echo completed unwritten']);
  });

  it('reports each step attempt and the wait the run ends with, the wait ended before the run', async () => {
    const store = openStore();
    const calls: string[] = [];
    const observer: TaskObserver = {
      runFinished: (_run, outcome) => calls.push(`finished ${outcome}`),
      stepStarted: (_run, step) => calls.push(`step ${step.name} #${step.attempt}`),
      stepEnded: (_run, step, outcome, err) =>
        calls.push(`step ${step.name} ${outcome}${err instanceof Error ? ` (${err.message})` : ''}`),
      waitStarted: (_run, wait) => calls.push(`wait ${wait.kind} ${String(wait.name)}`),
      waitEnded: (_run, wait, outcome) => calls.push(`wait ${wait.kind} ${outcome}`),
    };
    const runner: TaskRunner = async (_task, exec) => {
      await exec.step('fetch', () => 1);
      await exec.step(
        'flaky',
        () => {
          throw new Error('boom');
        },
        { retry: { maxAttempts: 2, initialDelayMs: 1_000, jitter: 0 } },
      );
      return { kind: 'completed', result: {} };
    };
    const deps = { store, runner, leaseMs: 60_000, clock: clockWithNow(now), observer };
    await track(startRun(deps, await claimOne(store))).done;
    expect(calls).toEqual([
      'step fetch #1',
      'step fetch completed',
      'step flaky #1',
      'step flaky retrying (boom)',
      'wait retry flaky',
      'wait retry parked',
      'finished waiting',
    ]);
    // The next run replays `fetch` (not run, not told) and fails `flaky` for good.
    advance(1_000);
    const again = await store.claim('w1', LEASE, now());
    if (again === undefined) throw new Error('nothing to claim');
    calls.length = 0;
    await track(startRun(deps, again)).done;
    expect(calls).toEqual(['step flaky #2', 'step flaky failed (boom)', 'finished failed']);
  });
});
