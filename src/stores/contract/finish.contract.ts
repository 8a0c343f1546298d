// The TaskStore contract: How a run ends: each outcome, fenced by its token, and terminal states that never change.
import { describe, expect, it } from 'vitest';
import { RESUMED_STATUS_MESSAGE, type JsonObject } from '../../tasks/task.js';
import { ALICE, LEASE, newTask, T0, type ContractStore } from './harness.contract.js';

export function finishContract(h: ContractStore): void {
  describe('finish outcomes', () => {
    it('completed: stores the result and is no longer claimable', async () => {
      const claimed = await h.running();
      h.t += 10;
      const result = { content: [{ type: 'text', text: 'done' }], isError: false };
      expect(await h.store.finish(claimed.id, claimed.token, { kind: 'completed', result }, h.t)).toBe(true);
      const got = await h.snap(claimed.id);
      expect(got).toMatchObject({ status: 'completed', result, error: undefined, updatedAt: T0 + 10 });
      expect(got.inputRequests).toEqual({});
      expect(await h.store.claim('w2', LEASE, h.t + 10 * LEASE)).toBeUndefined();
      expect(await h.store.countRunnable(h.t + 10 * LEASE)).toBe(0);
    });

    it('failed: stores the error and the status message', async () => {
      const claimed = await h.running();
      const error = { code: -32000, message: 'upstream broke', data: { retry: false } };
      expect(
        await h.store.finish(
          claimed.id,
          claimed.token,
          { kind: 'failed', error, statusMessage: 'It broke.' },
          h.t,
        ),
      ).toBe(true);
      expect(await h.snap(claimed.id)).toMatchObject({
        status: 'failed',
        error,
        statusMessage: 'It broke.',
        result: undefined,
      });
      expect(await h.store.claim('w2', LEASE, h.t + 10 * LEASE)).toBeUndefined();
    });

    it('cancelled: ends the task cancelled', async () => {
      const claimed = await h.running();
      expect(await h.store.finish(claimed.id, claimed.token, { kind: 'cancelled' }, h.t)).toBe(true);
      const got = await h.snap(claimed.id);
      expect(got.status).toBe('cancelled');
      expect(got.result).toBeUndefined();
      expect(await h.store.claim('w2', LEASE, h.t + 10 * LEASE)).toBeUndefined();
    });

    it('released: runnable again at once, with the same steps and a fresh token', async () => {
      const claimed = await h.running();
      await h.store.saveStep(claimed.id, claimed.token, 's', { v: 1 }, h.t);
      expect(await h.store.finish(claimed.id, claimed.token, { kind: 'released' }, h.t)).toBe(true);
      expect((await h.snap(claimed.id)).status).toBe('working');
      expect(await h.store.countRunnable(h.t)).toBe(1);
      const again = await h.claim('w2', h.t);
      expect(again).toMatchObject({ id: claimed.id, token: claimed.token + 1, takenOver: false });
      expect(again.steps).toEqual({ s: { v: 1 } });
      expect(await h.store.finish(claimed.id, claimed.token, { kind: 'completed', result: {} }, h.t)).toBe(
        false,
      );
    });

    it('input_required: waits for every outstanding key, then runs with all answers', async () => {
      const task = await h.store.create(
        newTask({ answers: { early: { action: 'accept', content: { name: 'x' } } } }),
      );
      h.t += 5;
      const run = await h.suspend(['a', 'b']);
      expect(run.answers).toEqual({ early: { action: 'accept', content: { name: 'x' } } });
      const waiting = await h.snap(task.id);
      expect(waiting.status).toBe('input_required');
      expect(waiting.inputRequests).toEqual({
        a: { method: 'elicitation/create', key: 'a' },
        b: { method: 'elicitation/create', key: 'b' },
      });
      expect(waiting.updatedAt).toBe(T0 + 5);
      expect(await h.store.claim('w2', LEASE, h.t + 10 * LEASE)).toBeUndefined();
      expect(await h.store.countRunnable(h.t)).toBe(0);

      h.t += 5;
      expect(
        await h.store.answer(task.id, ALICE, { a: { action: 'accept', content: { v: 'A' } } }, h.t),
      ).toEqual({ ok: true, resumed: false });
      let got = await h.snap(task.id);
      expect(got.status).toBe('input_required');
      expect(Object.keys(got.inputRequests)).toEqual(['b']);

      // Unknown, already answered and creation-time keys are ignored.
      const ignored: Record<string, JsonObject>[] = [
        { nope: { action: 'accept' } },
        { a: { action: 'decline' } },
        { early: { action: 'decline' } },
        {},
      ];
      for (const responses of ignored) {
        expect(await h.store.answer(task.id, ALICE, responses, h.t)).toEqual({ ok: true, resumed: false });
      }
      got = await h.snap(task.id);
      expect(got.status).toBe('input_required');
      expect(Object.keys(got.inputRequests)).toEqual(['b']);
      expect(await h.store.claim('w2', LEASE, h.t)).toBeUndefined();

      h.t += 5;
      expect(
        await h.store.answer(
          task.id,
          ALICE,
          { b: { action: 'accept', content: { v: 'B' } }, stray: { action: 'accept' } },
          h.t,
        ),
      ).toEqual({ ok: true, resumed: true });
      got = await h.snap(task.id);
      expect(got.status).toBe('working');
      // No longer "waiting for input": the answer says so.
      expect(got.statusMessage).toBe(RESUMED_STATUS_MESSAGE);
      expect(got.inputRequests).toEqual({});
      expect(got.updatedAt).toBe(T0 + 15);
      expect(await h.store.countRunnable(h.t)).toBe(1);

      const resumed = await h.claim('w2');
      expect(resumed.token).toBe(run.token + 1);
      expect(resumed.takenOver).toBe(false);
      expect(resumed.answers).toEqual({
        early: { action: 'accept', content: { name: 'x' } },
        a: { action: 'accept', content: { v: 'A' } },
        b: { action: 'accept', content: { v: 'B' } },
      });
      expect([...resumed.askedKeys].sort()).toEqual(expect.arrayContaining(['a', 'b']));
      expect(resumed.askedKeys).not.toContain('nope');
      expect(resumed.askedKeys).not.toContain('stray');
    });

    it('input_required: a later suspension asks only its own keys; earlier keys stay closed', async () => {
      // Through the port a task runs again only once every outstanding key is answered, so superseded
      // keys are observable only as keys of an earlier suspension that a later one no longer asks.
      const task = await h.store.create(newTask());
      await h.suspend(['a', 'b']);
      expect(await h.store.answer(task.id, ALICE, { a: { v: 1 }, b: { v: 2 } }, h.t)).toEqual({
        ok: true,
        resumed: true,
      });
      h.t += 1;
      const second = await h.suspend(['c', 'd']);
      expect(second.answers).toEqual({ a: { v: 1 }, b: { v: 2 } });
      expect(Object.keys((await h.snap(task.id)).inputRequests).sort()).toEqual(['c', 'd']);
      expect(await h.store.answer(task.id, ALICE, { a: { v: 'late' }, b: { v: 'late' } }, h.t)).toEqual({
        ok: true,
        resumed: false,
      });
      expect(await h.store.answer(task.id, ALICE, { c: { v: 3 } }, h.t)).toEqual({
        ok: true,
        resumed: false,
      });
      expect(Object.keys((await h.snap(task.id)).inputRequests)).toEqual(['d']);
      expect(await h.store.answer(task.id, ALICE, { d: { v: 4 } }, h.t)).toEqual({ ok: true, resumed: true });
      const third = await h.claim();
      expect(third.answers).toEqual({ a: { v: 1 }, b: { v: 2 }, c: { v: 3 }, d: { v: 4 } });
      expect([...third.askedKeys].sort()).toEqual(['a', 'b', 'c', 'd']);
    });

    it('refuses a second finish of the same run', async () => {
      const claimed = await h.running();
      expect(
        await h.store.finish(claimed.id, claimed.token, { kind: 'completed', result: { n: 1 } }, h.t),
      ).toBe(true);
      expect(
        await h.store.finish(claimed.id, claimed.token, { kind: 'completed', result: { n: 2 } }, h.t),
      ).toBe(false);
      expect(await h.store.finish(claimed.id, claimed.token, { kind: 'released' }, h.t)).toBe(false);
      expect(
        await h.store.finish(claimed.id, claimed.token, { kind: 'input_required', requests: { k: {} } }, h.t),
      ).toBe(false);
      const got = await h.snap(claimed.id);
      expect(got.status).toBe('completed');
      expect(got.result).toEqual({ n: 1 });
      expect(got.inputRequests).toEqual({});
    });
  });

  describe('terminal states never change', () => {
    it('keeps a completed task completed whatever comes after', async () => {
      const claimed = await h.running();
      const result = { answer: 42 };
      expect(await h.store.finish(claimed.id, claimed.token, { kind: 'completed', result }, h.t)).toBe(true);
      const before = await h.snap(claimed.id);
      h.t += 100;
      expect(await h.store.finish(claimed.id, claimed.token, { kind: 'cancelled' }, h.t)).toBe(false);
      expect(
        await h.store.finish(
          claimed.id,
          claimed.token,
          { kind: 'failed', error: { code: -1, message: 'x' }, statusMessage: 'x' },
          h.t,
        ),
      ).toBe(false);
      expect(await h.store.requestCancel(claimed.id, ALICE, h.t)).toEqual({
        ok: true,
        cancelledNow: false,
        running: false,
      });
      expect(await h.store.answer(claimed.id, ALICE, { k: { action: 'accept' } }, h.t)).toEqual({
        ok: true,
        resumed: false,
      });
      expect(await h.store.renew(claimed.id, claimed.token, LEASE, h.t)).toMatchObject({ held: false });
      expect(await h.store.setStatusMessage(claimed.id, claimed.token, 'late', h.t)).toBe(false);
      expect(await h.store.expire(h.t)).toBe(0);
      expect(await h.snap(claimed.id)).toEqual(before);
    });

    it('acknowledges a cancel of a failed or cancelled task without changing it', async () => {
      const failed = await h.running();
      const error = { code: -32603, message: 'boom' };
      await h.store.finish(failed.id, failed.token, { kind: 'failed', error, statusMessage: 'Boom.' }, h.t);
      const cancelled = await h.running();
      await h.store.finish(cancelled.id, cancelled.token, { kind: 'cancelled' }, h.t);
      for (const [id, status] of [
        [failed.id, 'failed'],
        [cancelled.id, 'cancelled'],
      ] as const) {
        const before = await h.snap(id);
        expect(await h.store.requestCancel(id, ALICE, h.t + 1)).toMatchObject({
          ok: true,
          cancelledNow: false,
        });
        expect(await h.snap(id)).toEqual(before);
        expect(before.status).toBe(status);
      }
    });
  });
}
