// Upgrade scenarios for both backends' migration tests: tasks stored before an upgrade resume after it, and read as
// the new release keeps them.
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { createPayloadCipher } from '../../tasks/payload-cipher.js';
import type { TaskStore } from '../../tasks/store.js';
import { RESUMED_STATUS_MESSAGE, slotWaitMessage, type RunOutcome } from '../../tasks/task.js';
import { PAUSED_MESSAGE } from '../../tasks/pauses.js';
import type { PayloadSealingOptions } from '../payload-sealing.js';
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

/** The options of a store that seals only sensitive tasks (the outcome upgrade's store holds both kinds). */
export const sealingSensitive = (): PayloadSealingOptions => ({
  cipher: createPayloadCipher([{ id: 'k1', key: randomBytes(32) }]),
  encrypt: 'sensitive',
});

/**
 * What a store of the release before outcomes holds for the outcome upgrade test (the store seals sensitive tasks:
 * sealingSensitive): completed tasks, clean, with a tool error the tool returned and one it threw (its error kept
 * beside the result), each unsealed and sealed; a failed and a cancelled task; an unfinished one.
 */
export async function seedOutcomeTasks(store: TaskStore, t0: number): Promise<Record<string, string>> {
  const returned = { content: [{ type: 'text', text: 'no' }], isError: true };
  const failure = { ref: 'err_1', name: 'Error', message: 'no', at: t0 };
  const endings: [string, boolean, RunOutcome][] = [
    ['clean', false, { kind: 'completed', result: { content: [], isError: false } }],
    ['returned', false, { kind: 'completed', result: returned }],
    ['threw', false, { kind: 'completed', result: returned, failure }],
    ['sealedClean', true, { kind: 'completed', result: { content: [] } }],
    ['sealedReturned', true, { kind: 'completed', result: returned }],
    ['sealedThrew', true, { kind: 'completed', result: returned, failure }],
    ['failed', false, { kind: 'failed', error: { code: -32603, message: 'no' }, statusMessage: 'No.' }],
    ['cancelled', false, { kind: 'cancelled' }],
  ];
  const ids: Record<string, string> = {};
  for (const [i, [name, sensitive, outcome]] of endings.entries()) {
    const task = await store.create(newTask({ createdAt: t0 + i, sensitive }));
    const run = await store.claim('w', 1_000, t0 + i);
    expect(run?.id).toBe(task.id);
    expect(await store.finish(task.id, run?.token ?? 0, outcome, t0 + i)).toBe(true);
    ids[name] = task.id;
  }
  ids.working = (await store.create(newTask({ createdAt: t0 + 100 }))).id;
  return ids;
}

/**
 * After the upgrade that keeps outcomes, the tasks stored before it have theirs: a completed task whose stored result
 * says isError, or which kept the error its tool threw, ended in a tool error. A sealed result is not read by the
 * upgrade: a sealed tool error the tool returned (without throwing) stays `completed`.
 */
export async function expectUpgradedOutcomes(
  store: TaskStore,
  ids: Record<string, string>,
  t0: number,
): Promise<void> {
  const admin = store.admin;
  if (admin === undefined) throw new Error('expected the operators’ port');
  const outcomes: Record<string, unknown> = {};
  for (const [name, id] of Object.entries(ids))
    outcomes[name] = (await admin.detail({ tenants: 'all' }, id, t0 + 1_000))?.outcome;
  expect(outcomes).toEqual({
    clean: 'completed',
    returned: 'tool_error',
    threw: 'tool_error',
    sealedClean: 'completed',
    sealedReturned: 'completed',
    sealedThrew: 'tool_error',
    failed: 'failed',
    cancelled: 'cancelled',
    working: undefined,
  });
  const found = await admin.list({ tenants: 'all' }, { limit: 10, outcome: ['tool_error'] }, t0 + 1_000);
  expect(found.items.map((t) => t.id).sort()).toEqual([ids.returned, ids.threw, ids.sealedThrew].sort());
  // And a retry of one of them works on the upgraded store.
  expect(await admin.retry({ tenants: 'all' }, ids.sealedThrew as string, t0 + 1_000)).toMatchObject({
    ok: true,
  });
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

/**
 * What a store of the release before error outcomes holds (sealing sensitive tasks: sealingSensitive): failed tasks
 * whose error data gives an outcome word, plain and sealed, one with free text, and a completed one.
 */
export async function seedErrorOutcomeTasks(store: TaskStore, t0: number): Promise<Record<string, string>> {
  const failedWith = (outcome: unknown): RunOutcome => ({
    kind: 'failed',
    error: { code: -32603, message: 'outcome unknown', data: { outcome, tool: 'pay' } },
    statusMessage: 'Failed.',
  });
  const endings: [string, boolean, RunOutcome][] = [
    ['unknown', false, failedWith('unknown')],
    ['sealedUnknown', true, failedWith('unknown')],
    ['notSent', false, failedWith('not_sent')],
    ['text', false, failedWith('Not a word')],
    ['completed', false, { kind: 'completed', result: { content: [] } }],
  ];
  const ids: Record<string, string> = {};
  for (const [i, [name, sensitive, outcome]] of endings.entries()) {
    const task = await store.create(newTask({ createdAt: t0 + i, sensitive }));
    const run = await store.claim('w', 1_000, t0 + i);
    expect(run?.id).toBe(task.id);
    expect(await store.finish(task.id, run?.token ?? 0, outcome, t0 + i)).toBe(true);
    ids[name] = task.id;
  }
  return ids;
}

/**
 * After the upgrade that keeps error outcomes, the plain errors stored before it are found by their word; a sealed
 * one is not read by the upgrade (SQL cannot open it), but a task that fails after it is found, sealed or not.
 */
export async function expectUpgradedErrorOutcomes(
  store: TaskStore,
  ids: Record<string, string>,
  t0: number,
): Promise<void> {
  const admin = store.admin;
  if (admin === undefined) throw new Error('expected the operators’ port');
  const search = async (word: string) =>
    (await admin.list({ tenants: 'all' }, { limit: 10, errorOutcome: word }, t0 + 1_000)).items.map(
      (t) => t.id,
    );
  expect(await search('unknown')).toEqual([ids.unknown]);
  expect(await search('not_sent')).toEqual([ids.notSent]);
  const later = await store.create(newTask({ createdAt: t0 + 500, sensitive: true }));
  const run = await store.claim('w', 1_000, t0 + 500);
  expect(run?.id).toBe(later.id);
  const error = { code: -32603, message: 'outcome unknown', data: { outcome: 'unknown' } };
  expect(
    await store.finish(
      later.id,
      run?.token ?? 0,
      { kind: 'failed', error, statusMessage: 'Failed.' },
      t0 + 501,
    ),
  ).toBe(true);
  expect(await search('unknown')).toEqual([later.id, ids.unknown]);
}

/**
 * On a store just upgraded to concurrency limits: of two tasks created at `t` under one key with limit 1, claims take
 * the first (and whatever else is in line), and the second waits, saying so.
 */
export async function expectLimitHeldAfterUpgrade(after: TaskStore, t: number): Promise<void> {
  const one = { key: 'deploy', limit: 1 };
  const first = await after.create(newTask({ createdAt: t, concurrency: one }));
  const second = await after.create(newTask({ createdAt: t, concurrency: one }));
  // Whatever else is left in line (the resumed task whose lease lapsed) is claimed too; the second one is not.
  const claimed: string[] = [];
  for (let c = await after.claim('w', 1_000, t); c !== undefined; c = await after.claim('w', 1_000, t))
    claimed.push(c.id);
  expect(claimed).toContain(first.id);
  expect(claimed).not.toContain(second.id);
  expect(await after.get(second.id, ALICE, t)).toMatchObject({ statusMessage: slotWaitMessage('deploy') });
}

/**
 * After the upgrade that adds priorities (migration 23), a task created with a priority goes ahead of its owner's
 * earlier task; tasks written before (priority 0) are claimed as before.
 */
export async function expectPrioritiesAfterUpgrade(after: TaskStore, t: number): Promise<void> {
  const low = await after.create(newTask({ createdAt: t }));
  const high = await after.create(newTask({ createdAt: t + 1, priority: 7 }));
  const claimed: string[] = [];
  for (
    let c = await after.claim('w', 1_000, t + 2);
    c !== undefined;
    c = await after.claim('w', 1_000, t + 2)
  )
    claimed.push(c.id);
  expect(claimed).toContain(low.id);
  expect(claimed.indexOf(high.id)).toBeLessThan(claimed.indexOf(low.id));
  expect(claimed.indexOf(high.id)).toBeGreaterThanOrEqual(0);
}

/**
 * After an upgrade to operators' pauses (migration 24 on both stores): a paused tool's new task waits, paused, while
 * other tools' tasks run; resumed, it runs.
 */
export async function expectPausesAfterUpgrade(after: TaskStore, t: number): Promise<void> {
  const admin = after.admin;
  if (admin?.pause === undefined || admin.resume === undefined) throw new Error('expected operators’ pauses');
  const all = { tenants: 'all' } as const;
  const drain = async (at: number): Promise<string[]> => {
    const claimed: string[] = [];
    for (let c = await after.claim('w', 1_000, at); c !== undefined; c = await after.claim('w', 1_000, at))
      claimed.push(c.id);
    return claimed;
  };
  await drain(t);
  expect(await admin.pause(all, { kind: 'tool', name: 'held' }, t)).toMatchObject({ ok: true });
  const held = await after.create(newTask({ createdAt: t, tool: 'held' }));
  const free = await after.create(newTask({ createdAt: t, tool: 'free' }));
  expect(await drain(t + 1)).toEqual([free.id]);
  expect(await after.get(held.id, ALICE, t + 1)).toMatchObject({ statusMessage: PAUSED_MESSAGE });
  expect(await admin.resume(all, { kind: 'tool', name: 'held' }, t + 2)).toEqual({ ok: true, resumed: 1 });
  expect(await drain(t + 3)).toEqual([held.id]);
}
