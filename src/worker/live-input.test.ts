// ExecutionContext.waitForInput on a real SQLite file: the run waits live, keeping its lease; an answer written by
// another connection (another process) reaches it; its signal or a cancel ends the wait with the requests withdrawn.
import { describe, expect, it } from 'vitest';
import type { JsonObject, RunOutcome } from '../tasks/task.js';
import type { TaskRunner } from '../tasks/execution.js';
import type { TaskObserver } from '../tasks/observer.js';
import {
  gate,
  newTask,
  now,
  openStore,
  snapshot,
  statusIs,
  useWorkerHarness,
  waitFor,
  worker,
} from '../../test/support/worker-harness.js';
import { ALICE } from '../../test/support/tasks.js';

useWorkerHarness();

const CONFIRM = {
  method: 'elicitation/create',
  params: { message: 'Go on?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } },
};
const YES = { action: 'accept', content: { ok: true } };

/** A runner that asks `requests` live and completes with the answers (or ends as the wait's error says). */
const asking =
  (requests: Record<string, JsonObject>, signal?: AbortSignal): TaskRunner =>
  async (_task, exec): Promise<RunOutcome> => {
    if (exec.waitForInput === undefined) throw new Error('no live input');
    try {
      const answers = await exec.waitForInput(requests, 'Waiting for you.', signal);
      return { kind: 'completed', result: { answers } };
    } catch (err) {
      if (exec.signal.aborted) return { kind: 'cancelled' };
      return { kind: 'failed', error: { code: -32603, message: (err as Error).message }, statusMessage: 'x' };
    }
  };

describe('waitForInput', () => {
  it('waits with its lease; an answer through another connection completes the run', async () => {
    const store = openStore();
    const other = openStore();
    const task = newTask();
    await store.create(task);
    // The observer is told of the wait: started once the requests are asked, over once answered.
    const waits: string[] = [];
    const observer: TaskObserver = {
      waitStarted: (_run, wait) => waits.push(`${wait.kind} started`),
      waitEnded: (_run, wait, outcome) => waits.push(`${wait.kind} ${outcome}`),
    };
    worker({ store, runner: asking({ confirm: CONFIRM }), observer });
    await waitFor(statusIs(other, task.id, 'input_required'), 'the live wait');
    // Told once the ask is durable: another connection may see it up to one WAL sync earlier.
    await waitFor(() => waits.length > 0, 'the observer to be told of the wait');
    expect(waits).toEqual(['input started']);
    const waiting = await snapshot(other, task.id);
    expect(waiting.inputRequests).toEqual({ confirm: CONFIRM });
    expect(waiting.statusMessage).toBe('Waiting for you.');
    // Another worker finds nothing to take.
    expect(await other.claim('w2', 60_000, now())).toBeUndefined();
    expect(await other.answer(task.id, ALICE, { confirm: YES }, now())).toEqual({ ok: true, resumed: true });
    await waitFor(statusIs(other, task.id, 'completed'), 'the run to complete', 5_000);
    expect((await snapshot(other, task.id)).result).toEqual({ answers: { confirm: YES } });
    expect(waits).toEqual(['input started', 'input over']);
  });

  it('asks a key the task used before as key#2, and returns the answer under the key given', async () => {
    const store = openStore();
    const task = newTask({ answers: { confirm: { action: 'decline' } } });
    await store.create(task);
    worker({ store, runner: asking({ confirm: CONFIRM }) });
    await waitFor(statusIs(store, task.id, 'input_required'), 'the live wait');
    expect(Object.keys((await snapshot(store, task.id)).inputRequests ?? {})).toEqual(['confirm#2']);
    await store.answer(task.id, ALICE, { 'confirm#2': YES }, now());
    await waitFor(statusIs(store, task.id, 'completed'), 'the run to complete', 5_000);
    expect((await snapshot(store, task.id)).result).toEqual({ answers: { confirm: YES } });
  });

  it('ends the wait when its signal fires: the request is withdrawn and the task works on', async () => {
    const store = openStore();
    const task = newTask();
    await store.create(task);
    const stop = new AbortController();
    const hold = gate();
    worker({
      store,
      runner: async (claimed, exec) => {
        const outcome = await asking({ confirm: CONFIRM }, stop.signal)(claimed, exec);
        await hold.wait;
        return outcome;
      },
    });
    await waitFor(statusIs(store, task.id, 'input_required'), 'the live wait');
    stop.abort(new Error('the upstream gave up'));
    await waitFor(statusIs(store, task.id, 'working'), 'the wait to end');
    expect((await snapshot(store, task.id)).inputRequests ?? {}).toEqual({});
    expect(await store.answer(task.id, ALICE, { confirm: YES }, now())).toEqual({ ok: true, resumed: false });
    hold.open();
    await waitFor(statusIs(store, task.id, 'failed'), 'the run to end');
    expect((await snapshot(store, task.id)).error).toMatchObject({ message: 'the upstream gave up' });
  });

  it('ends the wait on a cancel: the task ends cancelled', async () => {
    const store = openStore();
    const task = newTask();
    await store.create(task);
    worker({ store, runner: asking({ confirm: CONFIRM }) });
    await waitFor(statusIs(store, task.id, 'input_required'), 'the live wait');
    expect(await store.requestCancel(task.id, ALICE, now())).toMatchObject({ ok: true, running: true });
    await waitFor(statusIs(store, task.id, 'cancelled'), 'the cancel', 5_000);
  });
});
