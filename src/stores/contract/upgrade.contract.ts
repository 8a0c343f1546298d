// One upgrade scenario for both backends' migration tests: tasks stored before the upgrade resume after it.
import { expect } from 'vitest';
import type { TaskStore } from '../../tasks/store.js';
import { RESUMED_STATUS_MESSAGE } from '../../tasks/task.js';
import { ALICE, BOB, newTask } from './harness.contract.js';

/**
 * What a store of an earlier release holds for an upgrade test: a task whose run has stored a step (its lease then
 * lapses) and a task waiting for an answer. The test then takes the store back to that release's schema.
 */
export async function seedUpgradeTasks(
  store: TaskStore,
  t0: number,
): Promise<{ running: string; asking: string }> {
  const running = await store.create(newTask({ createdAt: t0 }));
  const asking = await store.create(newTask({ createdAt: t0 + 1 }));
  expect((await store.claim('w', 1_000, t0))?.id).toBe(running.id);
  await store.saveStep(running.id, 1, 'fetched', { rows: 3 }, t0);
  const second = await store.claim('w', 1_000, t0);
  const requests = { confirm: { method: 'elicitation/create' } };
  await store.finish(asking.id, second?.token ?? 0, { kind: 'input_required', requests }, t0);
  return { running: running.id, asking: asking.id };
}

/**
 * After the upgrade, those tasks go on as before: the running one is taken over with its step (and no attempts
 * recorded), the asking one is answered and resumes with its answer, and the running one completes.
 */
export async function expectUpgradedTasksResume(
  store: TaskStore,
  { running, asking }: { running: string; asking: string },
  t0: number,
): Promise<void> {
  const resumed = await store.claim('w2', 1_000, t0 + 2_000);
  expect(resumed).toMatchObject({ id: running, token: 2, takenOver: true, steps: { fetched: { rows: 3 } } });
  expect(resumed?.stepAttempts).toEqual({});
  const answer = { confirm: { action: 'accept' } };
  expect(await store.answer(asking, ALICE, answer, t0 + 2_001)).toEqual({ ok: true, resumed: true });
  expect(await store.claim('w2', 1_000, t0 + 2_002)).toMatchObject({ id: asking, answers: answer });
  const result = { content: [], isError: false };
  expect(await store.finish(running, 2, { kind: 'completed', result }, t0 + 2_003)).toBe(true);
  expect(await store.get(running, ALICE, t0 + 2_004)).toMatchObject({ status: 'completed', result });
}

/**
 * After the upgrade to status history and step timings (and the resumption above), the inspection of those tasks
 * reads without error: their history starts at the upgrade, and the step saved before it has no timings.
 */
export async function expectUpgradedInspection(
  store: TaskStore,
  { running, asking }: { running: string; asking: string },
  t0: number,
): Promise<void> {
  const ran = await store.inspect?.(running, t0 + 2_005);
  // A change records the status message the task has after it (a completion that sets none keeps the last one).
  expect(ran?.history).toEqual([{ at: t0 + 2_003, status: 'completed', statusMessage: 'Queued.' }]);
  expect(ran?.steps).toEqual([{ name: 'fetched', done: true, failedAttempts: 0, lastFailure: undefined }]);
  const asked = await store.inspect?.(asking, t0 + 2_005);
  // Answered: working again, and saying so.
  expect(asked?.history).toEqual([
    { at: t0 + 2_001, status: 'working', statusMessage: RESUMED_STATUS_MESSAGE },
  ]);
}

/** Before the upgrade that keeps when each place in line was taken: a task waiting in line (its place taken then). */
export async function seedLineBeforeUpgrade(store: TaskStore, t0: number): Promise<string> {
  return (await store.create(newTask({ createdAt: t0 }))).id;
}

/**
 * After that upgrade, the task in line keeps its turn: another owner's task created later takes the same place (the
 * head) and goes behind it, not ahead for want of a recorded time.
 */
export async function expectUpgradedLineOrder(store: TaskStore, waiting: string, t0: number): Promise<void> {
  const later = await store.create(newTask({ owner: BOB, createdAt: t0 + 10 }));
  expect((await store.claim('w', 1_000, t0 + 10))?.id).toBe(waiting);
  expect((await store.claim('w', 1_000, t0 + 10))?.id).toBe(later.id);
}
