// The TaskStore contract: Expiry, purge and the counts the worker and metrics read.
import { describe, expect, it } from 'vitest';
import { ALICE, EXPIRED_ERROR, LEASE, newTask, T0, type ContractStore } from './harness.contract.js';

export function housekeepingContract(h: ContractStore): void {
  describe('expire and purge', () => {
    it('fails non-terminal tasks past their TTL and leaves the others alone', async () => {
      const leased = await h.store.create(newTask({ ttlMs: 1_000, createdAt: T0 }));
      const asking = await h.store.create(newTask({ ttlMs: 1_000, createdAt: T0 + 1 }));
      const done = await h.store.create(newTask({ ttlMs: 1_000, createdAt: T0 + 2 }));
      const leasedRun = await h.claim('w1', T0 + 10);
      const askingRun = await h.claim('w1', T0 + 10);
      const doneRun = await h.claim('w1', T0 + 10);
      expect([leasedRun.id, askingRun.id, doneRun.id]).toEqual([leased.id, asking.id, done.id]);
      await h.store.finish(
        asking.id,
        askingRun.token,
        { kind: 'input_required', requests: { k: {} } },
        T0 + 10,
      );
      await h.store.finish(done.id, doneRun.token, { kind: 'completed', result: { ok: true } }, T0 + 10);
      const waiting = await h.store.create(newTask({ ttlMs: 1_000, createdAt: T0 + 3 }));
      const young = await h.store.create(newTask({ ttlMs: 5_000, createdAt: T0 + 4 }));
      const forever = await h.store.create(newTask({ ttlMs: null, createdAt: T0 + 5 }));
      const doneBefore = await h.snap(done.id, T0 + 10);

      expect(await h.store.expire(T0 + 999)).toBe(0);
      // Past the TTL of leased, asking, done and waiting; the lease (until T0 + 1010) still holds.
      h.t = T0 + 1_004;
      expect(await h.store.expire(h.t)).toBe(3);
      expect(await h.store.expire(h.t)).toBe(0);

      for (const task of [leased, asking, waiting]) {
        expect(await h.store.get(task.id, ALICE, h.t)).toBe('expired');
        const tombstone = await h.snap(task.id, T0 + 500);
        expect(tombstone.status).toBe('failed');
        expect(tombstone.error).toEqual(EXPIRED_ERROR);
        expect(tombstone.result).toBeUndefined();
        expect(tombstone.inputRequests).toEqual({});
      }
      expect(await h.snap(done.id, T0 + 10)).toEqual(doneBefore);
      expect((await h.snap(young.id)).status).toBe('working');
      expect((await h.snap(forever.id)).status).toBe('working');

      // The expired run has lost its lease: its writes are refused and the tombstone stays.
      expect(await h.store.renew(leased.id, leasedRun.token, LEASE, h.t)).toMatchObject({ held: false });
      expect(await h.store.saveStep(leased.id, leasedRun.token, 's', 1, h.t)).toBe(false);
      expect(
        await h.store.finish(leased.id, leasedRun.token, { kind: 'completed', result: { late: true } }, h.t),
      ).toBe(false);
      expect((await h.snap(leased.id, T0 + 500)).error).toEqual(EXPIRED_ERROR);
      // Only the young and the unlimited tasks can still run.
      expect(await h.store.countRunnable(h.t + LEASE)).toBe(2);
    });

    it('purges only tasks whose expiry plus the grace has passed', async () => {
      const grace = 10_000;
      const finished = await h.running(); // default TTL: 60 s
      await h.store.finish(finished.id, finished.token, { kind: 'completed', result: {} }, h.t);
      const old = await h.store.create(newTask({ ttlMs: 1_000 }));
      const newer = await h.store.create(newTask({ ttlMs: 5_000 }));
      const forever = await h.store.create(newTask({ ttlMs: null }));

      expect(await h.store.purge(T0 + 1_000 + grace - 1, grace)).toBe(0);
      expect(await h.store.expire(T0 + 1_000 + grace + 1)).toBe(2);
      expect(await h.store.purge(T0 + 1_000 + grace + 1, grace)).toBe(1);
      expect(await h.store.get(old.id, ALICE, T0)).toBe('not_found');
      expect((await h.snap(newer.id, T0)).status).toBe('failed');

      expect(await h.store.purge(T0 + 60_000 + grace + 1, grace)).toBe(2);
      expect(await h.store.get(newer.id, ALICE, T0)).toBe('not_found');
      expect(await h.store.get(finished.id, ALICE, T0)).toBe('not_found');
      expect(await h.store.answer(finished.id, ALICE, {}, T0)).toEqual({ ok: false, miss: 'not_found' });
      expect(await h.store.requestCancel(finished.id, ALICE, T0)).toEqual({ ok: false, miss: 'not_found' });
      expect((await h.snap(forever.id, T0 + 60_000 + grace + 1)).status).toBe('working');
      expect(await h.store.purge(T0 + 1_000_000_000, grace)).toBe(0);
    });
  });

  describe('countRunnable', () => {
    it('counts tasks waiting for a worker, including ones whose lease expired', async () => {
      expect(await h.store.countRunnable(h.t)).toBe(0);
      const a = await h.store.create(newTask({ createdAt: T0 }));
      await h.store.create(newTask({ createdAt: T0 + 1 }));
      await h.store.create(newTask({ createdAt: T0 + 2 }));
      expect(await h.store.countRunnable(h.t)).toBe(3);
      const first = await h.claim('w1', h.t);
      expect(first.id).toBe(a.id);
      expect(await h.store.countRunnable(h.t)).toBe(2);
      expect(await h.store.countRunnable(h.t + LEASE + 1)).toBe(3);
      const requests = { k: {} };
      await h.store.finish(first.id, first.token, { kind: 'input_required', requests }, h.t);
      expect(await h.store.countRunnable(h.t + LEASE + 1)).toBe(2);
      await h.store.answer(first.id, ALICE, { k: { action: 'accept' } }, h.t);
      expect(await h.store.countRunnable(h.t)).toBe(3);
    });
  });

  describe('stats', () => {
    it('counts tasks by status and the runnable backlog as tasks are created, run, suspended and end', async (ctx) => {
      const read = h.store.stats?.bind(h.store);
      if (read === undefined) return ctx.skip();
      const counts = async (at = h.t) => {
        const stats = await read(at);
        return { ...stats.byStatus, runnable: stats.runnable };
      };
      const none = { working: 0, input_required: 0, completed: 0, failed: 0, cancelled: 0, runnable: 0 };
      expect(await counts()).toEqual(none);
      const a = await h.store.create(newTask({ createdAt: T0 }));
      await h.store.create(newTask({ createdAt: T0 + 1 }));
      await h.store.create(newTask({ createdAt: T0 + 2 }));
      expect(await counts()).toEqual({ ...none, working: 3, runnable: 3 });

      const runA = await h.claim('w1', h.t);
      expect(runA.id).toBe(a.id);
      expect(await counts()).toEqual({ ...none, working: 3, runnable: 2 });
      // An expired lease puts the task back in the backlog; an expired TTL takes every task out of it.
      expect(await counts(h.t + LEASE + 1)).toEqual({ ...none, working: 3, runnable: 3 });
      expect(await counts(T0 + 60_002)).toEqual({ ...none, working: 3, runnable: 0 });

      await h.store.finish(runA.id, runA.token, { kind: 'input_required', requests: { k: {} } }, h.t);
      expect(await counts()).toEqual({ ...none, working: 2, input_required: 1, runnable: 2 });
      const runB = await h.claim('w1', h.t);
      await h.store.finish(runB.id, runB.token, { kind: 'completed', result: {} }, h.t);
      const runC = await h.claim('w1', h.t);
      const error = { code: -32000, message: 'broke' };
      await h.store.finish(runC.id, runC.token, { kind: 'failed', error, statusMessage: 'It broke.' }, h.t);
      expect(await counts()).toEqual({ ...none, input_required: 1, completed: 1, failed: 1 });

      await h.store.answer(a.id, ALICE, { k: { action: 'accept' } }, h.t);
      expect(await counts()).toEqual({ ...none, working: 1, completed: 1, failed: 1, runnable: 1 });
      await h.store.requestCancel(a.id, ALICE, h.t);
      expect(await counts()).toEqual({ ...none, completed: 1, failed: 1, cancelled: 1 });
      expect(await h.store.purge(T0 + 60_002, 0)).toBe(3);
      expect(await counts()).toEqual(none);
    });
  });
}
