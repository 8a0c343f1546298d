// One scenario for both stores, with a real worker: a task runs step a, asks for an answer, runs step b with it, and its
// step c fails once, so the task ends failed (or, as a tool would report a thrown error, completed with a tool error).
// An operator's retry makes a new task that runs from the last finished step: a and b ran once in all (the new task
// found them, and the answer b read, copied), c twice; the task retried never changes.
import { expect } from 'vitest';
import type { TaskRunner } from '../../src/tasks/execution.js';
import type { TaskStore } from '../../src/tasks/store.js';
import type { NewTask, RunOutcome, TaskSnapshot } from '../../src/tasks/task.js';
import { waitFor } from './worker-harness.js';

/** Whether step c fails on its next attempt (module-level, as a flaky dependency would be). */
let cFails = true;
/** How the run reports c's failure: a failed task, or a tool error (a completed isError result). */
let ending: 'failed' | 'tool_error' = 'failed';

const ran = { a: 0, b: 0, c: 0 };

const ASK = { go: { method: 'elicitation/create', params: { message: 'go on?' } } };

/** A tool's handler with steps a, b and c, asking for `go` between a and b; c fails the first time it runs. */
export const threeSteps: TaskRunner = async (task, exec) => {
  const a = await exec.step('a', () => ++ran.a && 1);
  const go = task.answers.go;
  if (go === undefined) return { kind: 'input_required', requests: ASK };
  const b = await exec.step('b', () => ++ran.b && (go.action === 'accept' ? 2 : -100));
  let c: number;
  try {
    c = await exec.step('c', () => {
      ran.c += 1;
      if (cFails) {
        cFails = false;
        throw new Error('c broke');
      }
      return 3;
    });
  } catch (err) {
    if (ending === 'failed') throw err;
    const failure = { ref: 'err_c', name: 'Error', message: 'c broke', step: 'c', at: exec.now() };
    const result = { content: [{ type: 'text', text: 'c broke' }], isError: true };
    return { kind: 'completed', result, statusMessage: 'The tool failed: c broke', failure } as RunOutcome;
  }
  return {
    kind: 'completed',
    result: { content: [{ type: 'text', text: String(a + b + c) }], isError: false },
  };
};

/** Runs the scenario on `store`, whose worker (running threeSteps) the caller has started. */
export async function expectRetryFromLastStep(
  store: TaskStore,
  task: NewTask,
  now: () => number,
  end: 'failed' | 'tool_error' = 'failed',
): Promise<void> {
  cFails = true;
  ending = end;
  Object.assign(ran, { a: 0, b: 0, c: 0 });
  const read = async (id: string): Promise<TaskSnapshot | undefined> => {
    const got = await store.get(id, task.owner, now());
    return typeof got === 'string' ? undefined : got;
  };
  const ended = end === 'failed' ? 'failed' : 'completed';
  await store.create(task);
  await waitFor(async () => (await read(task.id))?.status === 'input_required', 'the task to ask');
  await store.answer(task.id, task.owner, { go: { action: 'accept', content: {} } }, now());
  await waitFor(async () => (await read(task.id))?.status === ended, `the task to end ${ended}`);
  expect(ran).toEqual({ a: 1, b: 1, c: 1 });

  const admin = store.admin;
  if (admin === undefined) throw new Error('the store has no operators’ port');
  const before = await read(task.id);
  expect((await admin.detail({ tenants: 'all' }, task.id, now()))?.outcome).toBe(end);
  const retried = await admin.retry({ tenants: [task.owner.tenant] }, task.id, now());
  if (!retried.ok) throw new Error(`the retry was refused: ${retried.reason}`);
  const fork = retried.taskId;
  expect(fork).not.toBe(task.id);
  await waitFor(async () => (await read(fork))?.status === 'completed', 'the new task to complete');
  expect(ran).toEqual({ a: 1, b: 1, c: 2 });
  expect(await read(fork)).toMatchObject({ result: { content: [{ type: 'text', text: '6' }] } });
  // The task retried is as it ended; the new one names it, and it names the new one.
  expect(await read(task.id)).toEqual(before);
  const [original, made] = await Promise.all([
    admin.detail({ tenants: 'all' }, task.id, now()),
    admin.detail({ tenants: 'all' }, fork, now()),
  ]);
  expect(original).toMatchObject({ status: ended, outcome: end, retries: [fork] });
  expect(made).toMatchObject({ owner: task.owner, outcome: 'completed', retryOf: task.id });
  expect(made?.steps.map((s) => [s.name, s.done, s.failedAttempts])).toEqual([
    ['a', true, 0],
    ['b', true, 0],
    ['c', true, 0],
  ]);
}
