// The TaskStore contract: Creation, ownership and expiry, claims and leases, and the steps a run saves.
import { describe, expect, it } from 'vitest';
import { newTaskId } from '../../tasks/ids.js';
import type { TaskSnapshot } from '../../tasks/task.js';
import { ALICE, BOB, LEASE, newTask, OTHER_TENANT, T0, type ContractStore } from './harness.contract.js';

export function createAndClaimContract(h: ContractStore): void {
  describe('create and get', () => {
    it('reads its own write: every snapshot field as created', async () => {
      const task = newTask({ ttlMs: 30_000, pollIntervalMs: 250, statusMessage: 'Starting.' });
      const created = await h.store.create(task);
      const expected: TaskSnapshot = {
        id: task.id,
        status: 'working',
        statusMessage: 'Starting.',
        createdAt: T0,
        updatedAt: T0,
        ttlMs: 30_000,
        pollIntervalMs: 250,
        inputRequests: {},
        result: undefined,
        error: undefined,
      };
      // The revision is the store's own (optional) numbering: the same for both, whatever its value.
      const { revision, ...fields } = created;
      expect(fields).toEqual(expected);
      const got = await h.snap(task.id, T0 + 1);
      expect(got).toEqual(revision === undefined ? expected : { ...expected, revision });
      expect(got.result).toBeUndefined();
      expect(got.error).toBeUndefined();
    });

    it('keeps optional fields absent when not given', async () => {
      const task = newTask({ ttlMs: null, pollIntervalMs: undefined, statusMessage: undefined });
      await h.store.create(task);
      const got = await h.snap(task.id);
      expect(got.statusMessage).toBeUndefined();
      expect(got.pollIntervalMs).toBeUndefined();
      expect(got.ttlMs).toBeNull();
    });

    it('makes every one of many concurrent creations readable', async () => {
      const tasks = Array.from({ length: 50 }, (_, i) => newTask({ createdAt: T0 + i, args: { i } }));
      const created = await Promise.all(tasks.map((task) => h.store.create(task)));
      expect(created.map((s) => s.id)).toEqual(tasks.map((task) => task.id));
      const got = await Promise.all(tasks.map((task) => h.snap(task.id, T0 + 100)));
      got.forEach((s, i) => {
        expect(s.id).toBe(tasks[i]?.id);
        expect(s.status).toBe('working');
        expect(s.createdAt).toBe(T0 + i);
      });
      expect(await h.store.countRunnable(T0 + 100)).toBe(50);
    });
  });

  describe('ownership and expiry', () => {
    it('answers not_found to another principal, another tenant and a never-existing id', async () => {
      const task = newTask();
      await h.store.create(task);
      for (const [id, owner] of [
        [task.id, BOB],
        [task.id, OTHER_TENANT],
        [newTaskId(), ALICE],
      ] as const) {
        expect(await h.store.get(id, owner, h.t)).toBe('not_found');
        expect(await h.store.answer(id, owner, { k: { action: 'accept' } }, h.t)).toEqual({
          ok: false,
          miss: 'not_found',
        });
        expect(await h.store.requestCancel(id, owner, h.t)).toEqual({ ok: false, miss: 'not_found' });
      }
      // Nothing the others did touched the owner's task.
      expect((await h.snap(task.id)).status).toBe('working');
    });

    it('tells only the owner that their task expired once createdAt + ttlMs has passed', async () => {
      const task = newTask({ ttlMs: 1_000 });
      await h.store.create(task);
      expect((await h.snap(task.id, T0 + 999)).status).toBe('working');
      expect(await h.store.get(task.id, ALICE, T0 + 1_001)).toBe('expired');
      expect(await h.store.answer(task.id, ALICE, {}, T0 + 1_001)).toEqual({ ok: false, miss: 'expired' });
      expect(await h.store.requestCancel(task.id, ALICE, T0 + 1_001)).toEqual({ ok: false, miss: 'expired' });
      expect(await h.store.get(task.id, BOB, T0 + 1_001)).toBe('not_found');
      expect(await h.store.get(task.id, OTHER_TENANT, T0 + 1_001)).toBe('not_found');
    });

    it('never expires a task whose ttlMs is null', async () => {
      const task = newTask({ ttlMs: null });
      await h.store.create(task);
      const far = T0 + 10 * 365 * 24 * 3_600_000;
      expect((await h.snap(task.id, far)).status).toBe('working');
      expect(await h.store.expire(far)).toBe(0);
      expect(await h.store.purge(far, 0)).toBe(0);
      expect((await h.snap(task.id, far)).status).toBe('working');
    });
  });

  describe('claim and leases', () => {
    it('claims the oldest runnable task: token 1, no steps, the answers given at creation', async () => {
      // Of two owners' first tasks (both at the head of the line), the older goes first.
      const younger = newTask({ createdAt: T0 + 10, owner: BOB });
      const older = newTask({
        createdAt: T0,
        tool: 'report',
        args: { topic: 'q3' },
        replayAfterCrash: false,
        clientCapabilities: { sampling: {} },
        answers: { confirm: { action: 'accept', content: { ok: true } } },
      });
      await h.store.create(younger);
      await h.store.create(older);
      h.t = T0 + 20;
      const claimed = await h.claim('w1');
      expect(claimed).toMatchObject({
        id: older.id,
        owner: ALICE,
        tool: 'report',
        args: { topic: 'q3' },
        token: 1,
        takenOver: false,
        replayAfterCrash: false,
        cancelRequested: false,
        clientCapabilities: { sampling: {} },
        steps: {},
        answers: { confirm: { action: 'accept', content: { ok: true } } },
      });
      const next = await h.claim('w1');
      expect(next.id).toBe(younger.id);
      expect(next.token).toBe(1);
      expect(next.answers).toEqual({});
      expect(await h.store.claim('w1', LEASE, h.t)).toBeUndefined();
    });

    it('hands a leased task to another worker only after its lease expired, with a new token', async () => {
      const task = await h.store.create(newTask());
      const first = await h.claim('w1', T0);
      expect(await h.store.claim('w2', LEASE, T0 + LEASE - 1)).toBeUndefined();
      expect(await h.store.countRunnable(T0 + LEASE - 1)).toBe(0);

      const second = await h.claim('w2', T0 + LEASE + 1);
      expect(second).toMatchObject({ id: task.id, token: 2, takenOver: true });
      expect(second.token).toBeGreaterThan(first.token);

      expect(await h.store.renew(task.id, first.token, LEASE, T0 + LEASE + 2)).toMatchObject({ held: false });
      expect(
        await h.store.finish(
          task.id,
          first.token,
          { kind: 'completed', result: { by: 'w1' } },
          T0 + LEASE + 2,
        ),
      ).toBe(false);
      const after = await h.snap(task.id, T0 + LEASE + 3);
      expect(after.status).toBe('working');
      expect(after.result).toBeUndefined();

      expect(await h.store.renew(task.id, second.token, LEASE, T0 + LEASE + 4)).toEqual({
        held: true,
        cancelRequested: false,
      });
      expect(
        await h.store.finish(
          task.id,
          second.token,
          { kind: 'completed', result: { by: 'w2' } },
          T0 + LEASE + 5,
        ),
      ).toBe(true);
      const done = await h.snap(task.id, T0 + LEASE + 6);
      expect(done.status).toBe('completed');
      expect(done.result).toEqual({ by: 'w2' });
    });

    it('extends the lease on renew', async () => {
      await h.store.create(newTask());
      const claimed = await h.claim('w1', T0);
      expect((await h.store.renew(claimed.id, claimed.token, LEASE, T0 + 900)).held).toBe(true);
      expect(await h.store.claim('w2', LEASE, T0 + LEASE + 1)).toBeUndefined();
      expect(await h.store.claim('w2', LEASE, T0 + 900 + LEASE - 1)).toBeUndefined();
      const taken = await h.claim('w2', T0 + 900 + LEASE + 1);
      expect(taken).toMatchObject({ id: claimed.id, token: claimed.token + 1, takenOver: true });
    });

    it('claims up to max tasks in one batch, oldest first, each held by one worker', async (ctx) => {
      const batch = h.store.claimBatch?.bind(h.store);
      if (batch === undefined) return ctx.skip();
      const tasks: TaskSnapshot[] = [];
      // One task per owner: all at the head of the line, the oldest first.
      for (const i of [4, 0, 3, 1, 2])
        tasks[i] = await h.store.create(
          newTask({ createdAt: T0 + i, owner: { tenant: 't', principal: `p${i}` } }),
        );
      const ids = tasks.map((task) => task.id);
      const first = await batch('w1', LEASE, h.t, 3);
      expect(first.map((c) => c.id)).toEqual(ids.slice(0, 3));
      expect(first.map((c) => [c.token, c.takenOver])).toEqual([
        [1, false],
        [1, false],
        [1, false],
      ]);
      expect(first[0]).toMatchObject({
        tool: 'echo',
        args: { text: 'hello', n: 1 },
        steps: {},
        answers: {},
      });
      const second = await batch('w2', LEASE, h.t, 3);
      expect(second.map((c) => c.id)).toEqual(ids.slice(3));
      expect(await batch('w3', LEASE, h.t, 3)).toEqual([]);
      expect(await h.store.claim('w3', LEASE, h.t)).toBeUndefined();

      // The leases are real: once they lapse, another worker takes every task over with a new token.
      const again = await batch('w3', LEASE, h.t + LEASE + 1, 10);
      expect(again.map((c) => c.id)).toEqual(ids);
      expect(again.every((c) => c.token === 2 && c.takenOver)).toBe(true);
      expect(
        await h.store.finish(ids[0] as string, 1, { kind: 'completed', result: {} }, h.t + LEASE + 2),
      ).toBe(false);
    });

    it('answers renew of a never-existing task with held:false', async () => {
      expect(await h.store.renew(newTaskId(), 1, LEASE, h.t)).toMatchObject({ held: false });
    });
  });

  describe('steps', () => {
    it('persists a step saved under the current token for a run after a release', async () => {
      const claimed = await h.running();
      expect(await h.store.saveStep(claimed.id, claimed.token, 'fetch', { rows: [1, 2, 3] }, h.t)).toBe(true);
      expect(await h.store.saveStep(claimed.id, claimed.token, 'count', 3, h.t)).toBe(true);
      expect(await h.store.finish(claimed.id, claimed.token, { kind: 'released' }, h.t)).toBe(true);
      const again = await h.claim('w2');
      expect(again).toMatchObject({ id: claimed.id, token: claimed.token + 1, takenOver: false });
      expect(again.steps).toEqual({ fetch: { rows: [1, 2, 3] }, count: 3 });
    });

    it('keeps the order steps were done in, whatever their names, and the version of the code that created it', async () => {
      const task = await h.store.create(newTask({ toolVersion: '2.1' }));
      const claimed = await h.claim('w1');
      expect(claimed.toolVersion).toBe('2.1');
      expect(claimed.stepOrder).toEqual([]);
      for (const name of ['zeta', '10', 'alpha', '2'])
        expect(await h.store.saveStep(task.id, claimed.token, name, name, h.t)).toBe(true);
      expect(await h.store.finish(task.id, claimed.token, { kind: 'released' }, h.t)).toBe(true);
      const again = await h.claim('w2');
      expect(again.stepOrder).toEqual(['zeta', '10', 'alpha', '2']);
      expect(again.toolVersion).toBe('2.1');
      const unversioned = await h.store.create(newTask());
      expect(await h.store.finish(again.id, again.token, { kind: 'completed', result: {} }, h.t)).toBe(true);
      const plain = await h.claim('w3');
      expect(plain.id).toBe(unversioned.id);
      expect(plain.toolVersion).toBeUndefined();
    });

    it('persists a step across a suspension for input', async () => {
      const task = await h.store.create(newTask());
      const first = await h.claim();
      expect(await h.store.saveStep(task.id, first.token, 'a', 'A', h.t)).toBe(true);
      const requests = { k: { method: 'elicitation/create' } };
      expect(await h.store.finish(task.id, first.token, { kind: 'input_required', requests }, h.t)).toBe(
        true,
      );
      expect(await h.store.answer(task.id, ALICE, { k: { action: 'accept' } }, h.t)).toEqual({
        ok: true,
        resumed: true,
      });
      const second = await h.claim();
      expect(second.steps).toEqual({ a: 'A' });
      expect(second.answers).toEqual({ k: { action: 'accept' } });
    });

    it('persists a step across a lease expiry, and refuses one saved under a stale token', async () => {
      const task = await h.store.create(newTask());
      const first = await h.claim('w1', T0);
      expect(await h.store.saveStep(task.id, first.token, 'a', 1, T0)).toBe(true);
      const second = await h.claim('w2', T0 + LEASE + 1);
      expect(second.steps).toEqual({ a: 1 });
      expect(await h.store.saveStep(task.id, first.token, 'b', 'zombie', T0 + LEASE + 2)).toBe(false);
      expect(await h.store.saveStep(task.id, first.token, 'a', 'zombie', T0 + LEASE + 2)).toBe(false);
      expect(await h.store.saveStep(task.id, second.token, 'c', null, T0 + LEASE + 2)).toBe(true);
      const third = await h.claim('w3', T0 + 3 * LEASE);
      expect(third.steps).toEqual({ a: 1, c: null });
    });

    it('refuses steps once the task has ended', async () => {
      const claimed = await h.running();
      expect(await h.store.finish(claimed.id, claimed.token, { kind: 'completed', result: {} }, h.t)).toBe(
        true,
      );
      expect(await h.store.saveStep(claimed.id, claimed.token, 'late', 1, h.t)).toBe(false);
    });
  });
}
