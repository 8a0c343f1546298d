// The TaskAdmin contract: detail, cancel, retry and purge, each only within the operator's tenant scope.
import { describe, expect, it } from 'vitest';
import type { TaskChange } from '../../tasks/store.js';
import type { NewTask } from '../../tasks/task.js';
import { ACME, adminOf, ALL, seed } from './admin-fixture.contract.js';
import { ALICE, LEASE, must, newTask, OTHER_TENANT, T0, type ContractStore } from './harness.contract.js';

const NOT_FOUND = { ok: false, reason: 'not_found' };

/** The changes the store's feed delivers from now on (none without a feed). */
function watch(h: ContractStore): TaskChange[] {
  const seen: TaskChange[] = [];
  h.store.changes?.subscribe((c) => seen.push(c));
  return seen;
}

/** A task that ran steps a and b, failed step c for good and so failed; its owner has read it failed. */
async function failedAfterSteps(
  h: ContractStore,
  overrides: Partial<NewTask> = {},
): Promise<{ id: string; token: number }> {
  const run = await h.running(overrides);
  expect(await h.store.saveStep(run.id, run.token, 'a', 1, h.t)).toBe(true);
  expect(await h.store.saveStep(run.id, run.token, 'b', 2, h.t)).toBe(true);
  const failure = { attempt: 1, name: 'Error', message: 'c broke', at: h.t, final: true };
  expect(await h.store.saveStepFailure(run.id, run.token, 'c', failure, h.t)).toBe(true);
  const ref = { ref: 'r1', name: 'Error', message: 'c broke', step: 'c', attempt: 1, at: h.t };
  const error = { code: -32603, message: 'c broke' };
  const outcome = { kind: 'failed', error, statusMessage: 'It broke.', failure: ref } as const;
  expect(await h.store.finish(run.id, run.token, outcome, h.t)).toBe(true);
  expect((await h.snap(run.id, h.t, overrides.owner)).status).toBe('failed');
  return { id: run.id, token: run.token };
}

export function adminActionsContract(h: ContractStore): void {
  describe('operators: detail and cancel', () => {
    it('shows everything about a task within the scope, and nothing outside it', async () => {
      const mine = await seed(h, { createdAt: T0 });
      const theirs = await seed(h, { createdAt: T0 + 1, owner: OTHER_TENANT });
      const admin = adminOf(h);
      expect(await admin.detail(ALL, theirs, h.t)).toMatchObject({ id: theirs, owner: OTHER_TENANT });
      expect(await admin.detail(ACME, mine, h.t)).toMatchObject({
        id: mine,
        owner: ALICE,
        status: 'working',
      });
      expect(await admin.detail(ACME, theirs, h.t)).toBeUndefined();
      expect(await admin.detail(ALL, 'task_missing', h.t)).toBeUndefined();
    });

    it('names the input requests still unanswered while the task waits, and none otherwise', async () => {
      const run = await h.running();
      const requests = { k2: { method: 'elicitation/create' }, k1: { method: 'elicitation/create' } };
      const asking = { kind: 'input_required', requests } as const;
      expect(await h.store.finish(run.id, run.token, asking, h.t)).toBe(true);
      const admin = adminOf(h);
      expect((await admin.detail(ALL, run.id, h.t))?.pendingInputs).toEqual(['k1', 'k2']);
      expect(
        await h.store.answer(run.id, ALICE, { k1: { action: 'accept', content: {} } }, h.t + 1),
      ).toMatchObject({
        ok: true,
      });
      expect((await admin.detail(ALL, run.id, h.t + 1))?.pendingInputs).toEqual(['k2']);
      const working = await seed(h, { createdAt: T0 + 5 });
      expect((await admin.detail(ALL, working, h.t))?.pendingInputs).toBeUndefined();
    });

    it('lists the steps in the order they ran, not by name, those that never finished last', async () => {
      const run = await h.running();
      const failure = (at: number) => ({ attempt: 1, name: 'Error', message: 'flaky', at });
      // zeta ran first, then alpha (after a failed attempt), then mid; beta and aaa only failed, beta first.
      expect(await h.store.saveStep(run.id, run.token, 'zeta', 1, h.t + 1)).toBe(true);
      expect(await h.store.saveStepFailure(run.id, run.token, 'alpha', failure(h.t + 2), h.t + 2)).toBe(true);
      expect(await h.store.saveStep(run.id, run.token, 'alpha', 2, h.t + 3)).toBe(true);
      expect(await h.store.saveStep(run.id, run.token, 'mid', 3, h.t + 3)).toBe(true);
      expect(await h.store.saveStepFailure(run.id, run.token, 'beta', failure(h.t + 4), h.t + 4)).toBe(true);
      expect(await h.store.saveStepFailure(run.id, run.token, 'aaa', failure(h.t + 5), h.t + 5)).toBe(true);
      const detail = must(await adminOf(h).detail(ALL, run.id, h.t + 6));
      expect(detail.steps.map((s) => [s.name, s.done, s.failedAttempts])).toEqual([
        ['zeta', true, 0],
        ['alpha', true, 1],
        ['mid', true, 0],
        ['beta', false, 1],
        ['aaa', false, 1],
      ]);
      expect((await h.store.inspect?.(run.id, h.t + 6))?.steps).toEqual(detail.steps);
    });

    it('cancels as the owner would: at once when idle, by flag when running; terminal when finished', async () => {
      const idle = await h.store.create(newTask({ createdAt: h.t }));
      const seen = watch(h);
      const admin = adminOf(h);
      expect(await admin.cancel(ALL, idle.id, h.t + 1)).toEqual({ ok: true });
      expect((await h.snap(idle.id)).status).toBe('cancelled');
      if (h.store.changes !== undefined)
        expect(seen).toContainEqual(expect.objectContaining({ taskId: idle.id, cancelRequested: true }));
      expect(await admin.cancel(ALL, idle.id, h.t + 2)).toEqual({ ok: false, reason: 'terminal' });

      const run = await h.running();
      expect(await admin.cancel(ACME, run.id, h.t + 3)).toEqual({ ok: true });
      expect((await h.snap(run.id)).status).toBe('working');
      expect(await h.store.renew(run.id, run.token, LEASE, h.t + 4)).toEqual({
        held: true,
        cancelRequested: true,
      });
    });

    it('cancels nothing outside the scope', async () => {
      const theirs = await h.store.create(newTask({ createdAt: h.t, owner: OTHER_TENANT }));
      expect(await adminOf(h).cancel(ACME, theirs.id, h.t)).toEqual(NOT_FOUND);
      expect(await adminOf(h).cancel(ALL, 'task_missing', h.t)).toEqual(NOT_FOUND);
      expect((await h.snap(theirs.id, h.t, OTHER_TENANT)).status).toBe('working');
    });
  });

  describe('operators: retry', () => {
    it('runs a failed task again from its last finished step, for any worker, and tells subscribers', async () => {
      const caps = { elicitation: {}, sampling: {} };
      const { id, token } = await failedAfterSteps(h, {
        args: { text: 'hi' },
        clientCapabilities: caps,
        toolVersion: 'v3',
        ttlMs: 5_000,
        answers: { k: { action: 'accept', content: { go: true } } },
      });
      const admin = adminOf(h);
      const before = { snap: await h.snap(id), detail: must(await admin.detail(ALL, id, h.t)) };
      const seen = watch(h);
      h.t += 10;
      const retried = await admin.retry(ALL, id, h.t);
      if (!retried.ok) throw new Error(`refused: ${retried.reason}`);
      const fork = retried.taskId;
      expect(fork).not.toBe(id);
      expect(fork).toMatch(/^task_[\w-]{32}$/);
      if (h.store.changes !== undefined)
        expect(seen).toContainEqual(expect.objectContaining({ taskId: fork, runnable: true }));
      // The task retried never changes (a finished status is final); its detail names the new task.
      expect(await h.snap(id)).toEqual(before.snap);
      expect(await admin.detail(ALL, id, h.t)).toEqual({ ...before.detail, retries: [fork] });
      // The new task: its owner's, working, its TTL counted from the retry, naming the task it came from.
      expect(await h.snap(fork)).toMatchObject({
        status: 'working',
        createdAt: h.t,
        ttlMs: 5_000,
        pollIntervalMs: 500,
        result: undefined,
        error: undefined,
      });
      const detail = must(await admin.detail(ALL, fork, h.t));
      expect(detail).toMatchObject({
        owner: ALICE,
        tool: 'echo',
        toolVersion: 'v3',
        outcome: undefined,
        retryOf: id,
        expiresAt: h.t + 5_000,
        idempotencyKey: undefined,
        failure: undefined,
      });
      // Its steps are the finished ones, with their timings; the failed step's attempts are not copied.
      const kept = before.detail.steps.filter((s) => s.done);
      expect(detail.steps).toEqual(kept);
      // Any worker runs it: the finished steps in their order, the answers, afresh for c, a new lease.
      const again = await h.claim('w2', h.t);
      expect(again).toMatchObject({
        id: fork,
        args: { text: 'hi' },
        clientCapabilities: caps,
        toolVersion: 'v3',
        steps: { a: 1, b: 2 },
        stepOrder: ['a', 'b'],
        stepAttempts: {},
        answers: { k: { action: 'accept', content: { go: true } } },
        takenOver: false,
      });
      expect(await h.store.saveStep(id, token, 'c', 3, h.t)).toBe(false);
      const result = { content: [], isError: false };
      expect(await h.store.finish(fork, again.token, { kind: 'completed', result }, h.t)).toBe(true);
      expect(await h.snap(fork)).toMatchObject({ status: 'completed', result });
      expect((await h.snap(id)).status).toBe('failed');
    });

    it('keeps a step value an operator recorded in the new task, after the steps copied, for its run to take', async () => {
      const { id } = await failedAfterSteps(h);
      const admin = adminOf(h);
      h.t += 10;
      const value = { content: [{ type: 'text', text: 'verified: done' }], structuredContent: { n: 3 } };
      const retried = await admin.retry(ALL, id, h.t, { record: { step: 'c', value } });
      if (!retried.ok) throw new Error(`refused: ${retried.reason}`);
      const detail = must(await admin.detail(ALL, retried.taskId, h.t));
      expect(detail.steps.map((s) => [s.name, s.done])).toEqual([
        ['a', true],
        ['b', true],
        ['c', true],
      ]);
      const again = await h.claim('w2', h.t);
      expect(again).toMatchObject({
        id: retried.taskId,
        steps: { a: 1, b: 2, c: value },
        stepOrder: ['a', 'b', 'c'],
      });
      // A step the task retried had finished keeps its value: nothing to record.
      expect(await admin.retry(ALL, id, h.t, { record: { step: 'b', value: 7 } })).toEqual({
        ok: false,
        reason: 'step_kept',
      });
    });

    it('retries only tasks that failed or ended in a tool error, within the scope', async () => {
      const admin = adminOf(h);
      const { id } = await failedAfterSteps(h, { owner: OTHER_TENANT });
      const working = await h.store.create(newTask({ createdAt: h.t }));
      const notFailed = { ok: false, reason: 'not_failed' };
      expect(await admin.retry(ALL, working.id, h.t)).toEqual(notFailed);
      expect(await admin.retry(ACME, id, h.t)).toEqual(NOT_FOUND);
      expect(await admin.retry(ALL, 'task_missing', h.t)).toEqual(NOT_FOUND);
      expect((await h.snap(id, h.t, OTHER_TENANT)).status).toBe('failed');
      await h.store.requestCancel(working.id, ALICE, h.t);
      expect(await admin.retry(ALL, working.id, h.t)).toEqual(notFailed);
      const clean = { kind: 'completed', result: { content: [], isError: false } } as const;
      const done = await seed(h, { createdAt: h.t }, clean);
      expect(await admin.retry(ALL, done, h.t)).toEqual(notFailed);
      const toolError = { kind: 'completed', result: { content: [], isError: true } } as const;
      const broken = await seed(h, { createdAt: h.t }, toolError);
      expect(await admin.retry(ALL, broken, h.t)).toMatchObject({ ok: true });
      expect((await h.snap(broken)).status).toBe('completed');
    });

    it('gives a task its TTL again from the retry, so a task failed by its TTL runs again', async () => {
      const task = await h.store.create(newTask({ createdAt: h.t, ttlMs: 1_000 }));
      expect(await h.store.expire(T0 + 1_000)).toBe(1);
      h.t = T0 + 5_000;
      const retried = await adminOf(h).retry(ALL, task.id, h.t);
      if (!retried.ok) throw new Error(`refused: ${retried.reason}`);
      expect(await adminOf(h).detail(ALL, retried.taskId, h.t)).toMatchObject({ expiresAt: T0 + 6_000 });
      expect(await h.store.expire(h.t + 999)).toBe(0);
      expect((await h.snap(retried.taskId, h.t + 999)).status).toBe('working');
      expect((await h.claim('w1', h.t)).id).toBe(retried.taskId);
      // The task retried is as its TTL left it.
      expect(await adminOf(h).detail(ALL, task.id, h.t)).toMatchObject({
        status: 'failed',
        expiresAt: T0 + 1_000,
      });
    });

    it('leaves the idempotency key with the task retried', async () => {
      const { id } = await failedAfterSteps(h, { idempotencyKey: 'k1' });
      const retried = await adminOf(h).retry(ALL, id, h.t);
      if (!retried.ok) throw new Error(`refused: ${retried.reason}`);
      expect((await adminOf(h).detail(ALL, retried.taskId, h.t))?.idempotencyKey).toBeUndefined();
      const args = newTask().args;
      expect((await h.store.findByIdempotencyKey(ALICE, 'echo', 'k1', args, h.t))?.id).toBe(id);
      const again = await h.store.create(newTask({ createdAt: h.t, idempotencyKey: 'k1' }));
      expect(again.id).toBe(id);
    });

    it('makes a new task each time, each from the task retried', async () => {
      const { id } = await failedAfterSteps(h);
      const admin = adminOf(h);
      h.t += 1;
      const first = await admin.retry(ALL, id, h.t);
      h.t += 1;
      const second = await admin.retry(ALL, id, h.t);
      if (!first.ok || !second.ok) throw new Error('refused');
      expect(second.taskId).not.toBe(first.taskId);
      expect((await admin.detail(ALL, id, h.t))?.retries).toEqual([first.taskId, second.taskId]);
      const rows = await admin.list(ALL, { limit: 10, order: 'asc' }, h.t);
      expect(rows.items.map((r) => [r.id, r.retryOf])).toEqual([
        [id, undefined],
        [first.taskId, id],
        [second.taskId, id],
      ]);
    });

    it('is seen by another instance on the same storage that had read the task failed', async (ctx) => {
      if (h.openPeer === undefined) return ctx.skip();
      const { id } = await failedAfterSteps(h);
      const peer = await h.openPeer();
      try {
        const read = async (task: string) => {
          const got = await peer.get(task, ALICE, h.t);
          return typeof got === 'string' ? got : got.status;
        };
        expect(await read(id)).toBe('failed');
        const retried = await adminOf(h).retry(ALL, id, h.t);
        if (!retried.ok) throw new Error(`refused: ${retried.reason}`);
        expect(await read(retried.taskId)).toBe('working');
        expect(await read(id)).toBe('failed');
        // The peer's workers claim it.
        expect((await peer.claim('peer', LEASE, h.t))?.id).toBe(retried.taskId);
      } finally {
        await peer.close();
      }
    });
  });

  describe('operators: purge', () => {
    it('deletes a finished task and all it keeps; its idempotency key is free again', async () => {
      const { id } = await failedAfterSteps(h, { idempotencyKey: 'k1' });
      expect(await adminOf(h).purge(ALL, id, h.t)).toEqual({ ok: true });
      expect(await h.store.get(id, ALICE, h.t)).toBe('not_found');
      expect(await adminOf(h).detail(ALL, id, h.t)).toBeUndefined();
      expect(await h.store.inspect?.(id, h.t)).toBeUndefined();
      expect(await adminOf(h).purge(ALL, id, h.t)).toEqual(NOT_FOUND);
      const next = await h.store.create(
        newTask({ createdAt: h.t, idempotencyKey: 'k1', args: { other: true } }),
      );
      expect(next.id).not.toBe(id);
      expect((await adminOf(h).list(ALL, { limit: 10 }, h.t)).items.map((t) => t.id)).toEqual([next.id]);
    });

    it('keeps unfinished tasks and tasks outside the scope', async () => {
      const { id } = await failedAfterSteps(h, { owner: OTHER_TENANT });
      const working = await h.store.create(newTask({ createdAt: h.t }));
      expect(await adminOf(h).purge(ALL, working.id, h.t)).toEqual({ ok: false, reason: 'not_terminal' });
      expect(await adminOf(h).purge(ACME, id, h.t)).toEqual(NOT_FOUND);
      expect((await h.snap(id, h.t, OTHER_TENANT)).status).toBe('failed');
      expect((await h.snap(working.id)).status).toBe('working');
    });
  });
}
