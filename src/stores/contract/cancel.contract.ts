// The TaskStore contract: Cancellation in every state a task can be in, and status messages under the current token.
import { describe, expect, it } from 'vitest';
import type { TaskStore } from '../../tasks/store.js';
import { ALICE, LEASE, newTask, T0, type ContractStore } from './harness.contract.js';

export function cancelContract(h: ContractStore): void {
  describe('cancellation', () => {
    it('cancels a task waiting for a worker at once', async () => {
      const task = await h.store.create(newTask());
      h.t += 3;
      expect(await h.store.requestCancel(task.id, ALICE, h.t)).toEqual({
        ok: true,
        cancelledNow: true,
        running: false,
      });
      const got = await h.snap(task.id);
      expect(got.status).toBe('cancelled');
      expect(got.updatedAt).toBe(T0 + 3);
      expect(await h.store.claim('w1', LEASE, h.t)).toBeUndefined();
      expect(await h.store.countRunnable(h.t)).toBe(0);
    });

    it('cancels a task waiting for input at once, and ignores answers afterwards', async () => {
      const task = await h.store.create(newTask());
      await h.suspend(['k']);
      expect(await h.store.requestCancel(task.id, ALICE, h.t)).toEqual({
        ok: true,
        cancelledNow: true,
        running: false,
      });
      expect(await h.store.answer(task.id, ALICE, { k: { action: 'accept' } }, h.t)).toEqual({
        ok: true,
        resumed: false,
      });
      const got = await h.snap(task.id);
      expect(got.status).toBe('cancelled');
      expect(got.inputRequests).toEqual({});
      // It says what it is now, not what it was doing before it waited.
      expect(got.statusMessage).toBe('Task was cancelled.');
      expect(await h.store.claim('w1', LEASE, h.t)).toBeUndefined();
    });

    it('cancels a task whose lease expired (its worker is gone) at once', async () => {
      const claimed = await h.running();
      expect(await h.store.requestCancel(claimed.id, ALICE, h.t + LEASE + 1)).toMatchObject({
        ok: true,
        cancelledNow: true,
      });
      expect((await h.snap(claimed.id, h.t + LEASE + 1)).status).toBe('cancelled');
      expect(await h.store.finish(claimed.id, claimed.token, { kind: 'completed', result: {} }, h.t)).toBe(
        false,
      );
    });

    it('flags a running task: status unchanged, renew and a claim after a crash report it', async () => {
      const claimed = await h.running();
      expect(await h.store.requestCancel(claimed.id, ALICE, h.t + 1)).toEqual({
        ok: true,
        cancelledNow: false,
        running: true,
      });
      expect((await h.snap(claimed.id, h.t + 1)).status).toBe('working');
      expect(await h.store.renew(claimed.id, claimed.token, LEASE, h.t + 2)).toEqual({
        held: true,
        cancelRequested: true,
      });
      const again = await h.claim('w2', h.t + 2 + LEASE + 1);
      expect(again.cancelRequested).toBe(true);
      expect(await h.store.finish(again.id, again.token, { kind: 'cancelled' }, h.t + LEASE + 4)).toBe(true);
      expect((await h.snap(claimed.id, h.t + LEASE + 4)).status).toBe('cancelled');
    });

    it('ends a cancel-requested task cancelled when its run then asks for input', async () => {
      const claimed = await h.running();
      await h.store.requestCancel(claimed.id, ALICE, h.t);
      await h.store.setStatusMessage(claimed.id, claimed.token, 'Preparing.', h.t);
      const waiting = { kind: 'input_required', requests: { k: {} }, statusMessage: 'Waiting.' } as const;
      expect(await h.store.finish(claimed.id, claimed.token, waiting, h.t)).toBe(true);
      const got = await h.snap(claimed.id);
      expect(got.status).toBe('cancelled');
      expect(got.statusMessage).toBe('Task was cancelled.');
      expect(got.inputRequests).toEqual({});
      expect(await h.store.claim('w2', LEASE, h.t + 10 * LEASE)).toBeUndefined();
    });

    it('lets a cancel-requested run still complete (the first terminal write wins)', async () => {
      const claimed = await h.running();
      await h.store.requestCancel(claimed.id, ALICE, h.t);
      expect(
        await h.store.finish(claimed.id, claimed.token, { kind: 'completed', result: { ok: 1 } }, h.t),
      ).toBe(true);
      expect(await h.snap(claimed.id)).toMatchObject({ status: 'completed', result: { ok: 1 } });
    });

    it('never overwrites a terminal state when cancel and completion race', async () => {
      for (let i = 0; i < 200; i++) {
        h.t = T0 + i * 10 * LEASE;
        const claimed = await h.running();
        // Half the cancels arrive while the lease is valid (flag), half after it lapsed (cancel at once).
        const cancelAt = i % 4 < 2 ? h.t + 1 : h.t + LEASE + 1;
        const result = { i };
        const cancel = () => h.store.requestCancel(claimed.id, ALICE, cancelAt);
        const finish = () =>
          h.store.finish(claimed.id, claimed.token, { kind: 'completed', result }, h.t + 1);
        let finished: boolean;
        let cancelled: Awaited<ReturnType<TaskStore['requestCancel']>>;
        if (i % 2 === 0) [cancelled, finished] = await Promise.all([cancel(), finish()]);
        else [finished, cancelled] = await Promise.all([finish(), cancel()]);

        const got = await h.snap(claimed.id, cancelAt);
        expect(['completed', 'cancelled'], `iteration ${i}`).toContain(got.status);
        if (finished) {
          expect(got.status, `iteration ${i}`).toBe('completed');
          expect(got.result, `iteration ${i}`).toEqual(result);
          expect(cancelled).toMatchObject({ ok: true, cancelledNow: false });
        } else {
          expect(got.status, `iteration ${i}`).toBe('cancelled');
          expect(got.result, `iteration ${i}`).toBeUndefined();
          expect(cancelled).toMatchObject({ ok: true, cancelledNow: true });
        }
        // Nothing that comes later changes the outcome.
        await h.store.requestCancel(claimed.id, ALICE, cancelAt + 1);
        await h.store.finish(claimed.id, claimed.token, { kind: 'cancelled' }, cancelAt + 1);
        await h.store.finish(
          claimed.id,
          claimed.token,
          { kind: 'completed', result: { late: true } },
          cancelAt + 1,
        );
        expect(await h.snap(claimed.id, cancelAt + 1), `iteration ${i}`).toEqual(got);
      }
    });
  });

  describe('status messages', () => {
    it('updates statusMessage and updatedAt under the current token only', async () => {
      const claimed = await h.running();
      h.t += 7;
      expect(await h.store.setStatusMessage(claimed.id, claimed.token, 'Halfway there.', h.t)).toBe(true);
      expect(await h.snap(claimed.id)).toMatchObject({
        status: 'working',
        statusMessage: 'Halfway there.',
        updatedAt: T0 + 7,
      });
      const second = await h.claim('w2', h.t + LEASE + 1);
      expect(await h.store.setStatusMessage(claimed.id, claimed.token, 'zombie', h.t + LEASE + 2)).toBe(
        false,
      );
      expect(await h.store.setStatusMessage(claimed.id, second.token, 'Resumed.', h.t + LEASE + 3)).toBe(
        true,
      );
      expect(await h.snap(claimed.id, h.t + LEASE + 3)).toMatchObject({
        statusMessage: 'Resumed.',
        updatedAt: h.t + LEASE + 3,
      });
    });
  });
}
