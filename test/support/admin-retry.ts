// One scenario for both stores, with a real worker: a task whose third step fails once ends failed; an operator's
// retry runs it again from its last finished step, so the first two steps ran once in all and the third twice.
import { expect } from 'vitest';
import type { TaskRunner } from '../../src/tasks/execution.js';
import type { TaskStore } from '../../src/tasks/store.js';
import type { NewTask, TaskStatus } from '../../src/tasks/task.js';
import { waitFor } from './worker-harness.js';

/** Whether step c fails on its next attempt (module-level, as a flaky dependency would be). */
let cFails = true;

const ran = { a: 0, b: 0, c: 0 };

/** A tool's handler with steps a, b and c; c fails the first time it runs. */
export const threeSteps: TaskRunner = async (_task, exec) => {
  const a = await exec.step('a', () => ++ran.a && 1);
  const b = await exec.step('b', () => ++ran.b && 2);
  const c = await exec.step('c', () => {
    ran.c += 1;
    if (cFails) {
      cFails = false;
      throw new Error('c broke');
    }
    return 3;
  });
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
): Promise<void> {
  cFails = true;
  Object.assign(ran, { a: 0, b: 0, c: 0 });
  const status = async (): Promise<TaskStatus | string> => {
    const got = await store.get(task.id, task.owner, now());
    return typeof got === 'string' ? got : got.status;
  };
  await store.create(task);
  await waitFor(async () => (await status()) === 'failed', 'the task to fail');
  expect(ran).toEqual({ a: 1, b: 1, c: 1 });

  const admin = store.admin;
  if (admin === undefined) throw new Error('the store has no operators’ port');
  expect(await admin.retry({ tenants: [task.owner.tenant] }, task.id, now())).toEqual({ ok: true });
  await waitFor(async () => (await status()) === 'completed', 'the retried task to complete');
  expect(ran).toEqual({ a: 1, b: 1, c: 2 });
  const done = await store.get(task.id, task.owner, now());
  expect(done).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: '6' }] } });
  const detail = await admin.detail({ tenants: 'all' }, task.id, now());
  expect(detail?.steps.map((s) => [s.name, s.done])).toEqual([
    ['a', true],
    ['b', true],
    ['c', true],
  ]);
}
