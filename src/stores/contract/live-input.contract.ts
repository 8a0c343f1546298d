// The TaskStore contract: input asked while the run stays live (LiveInputPort). The task waits input_required under
// the run's lease; no claim takes it while the lease lives, answered or not; once the lease lapses it is runnable.
import { beforeEach, describe, expect, it } from 'vitest';
import type { LiveInputPort } from '../../tasks/store.js';
import { ALICE, LEASE, must, newTask, type ContractStore } from './harness.contract.js';

const CONFIRM = {
  method: 'elicitation/create',
  params: {
    message: 'Go on?',
    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
  },
};
const YES = { action: 'accept', content: { ok: true } };

export function liveInputContract(h: ContractStore): void {
  describe('live input', () => {
    const port = (): LiveInputPort => must(h.store.liveInput, 'live input port');
    // An optional capability: a store without it is not tested here.
    beforeEach((ctx) => {
      if (h.store.liveInput === undefined) ctx.skip();
    });

    it('shows the requests while the run keeps its lease, and hands the answers to the run only', async () => {
      const run = await h.running();
      expect(await port().ask(run.id, run.token, { confirm: CONFIRM }, 'Waiting.', h.t)).toBe(true);
      const waiting = await h.snap(run.id);
      expect(waiting.status).toBe('input_required');
      expect(waiting.statusMessage).toBe('Waiting.');
      expect(waiting.inputRequests).toEqual({ confirm: CONFIRM });
      // The lease goes on, and nothing claims the task.
      expect(await h.store.renew(run.id, run.token, LEASE, h.t + 500)).toEqual({
        held: true,
        cancelRequested: false,
      });
      expect(await h.store.claim('w2', LEASE, h.t + 600)).toBeUndefined();
      expect(await port().answers(run.id, run.token, ['confirm'])).toEqual({});
      expect(await h.store.answer(run.id, ALICE, { confirm: YES }, h.t + 700)).toEqual({
        ok: true,
        resumed: true,
      });
      // Answered, and still the run's while its lease lives.
      expect(await h.store.claim('w2', LEASE, h.t + 800)).toBeUndefined();
      expect(await port().answers(run.id, run.token, ['confirm'])).toEqual({ confirm: YES });
      expect(await port().answers(run.id, run.token + 1, ['confirm'])).toBeUndefined();
      expect(await port().end(run.id, run.token, 'Withdrawn.', h.t + 900)).toBe(true);
      const working = await h.snap(run.id);
      expect(working.status).toBe('working');
      expect(working.inputRequests ?? {}).toEqual({});
      expect(await h.store.finish(run.id, run.token, { kind: 'completed', result: {} }, h.t + 1_000)).toBe(
        true,
      );
    });

    it('withdraws the requests still unanswered when the wait ends, and refuses answers to them', async () => {
      const run = await h.running();
      await port().ask(run.id, run.token, { confirm: CONFIRM }, 'Waiting.', h.t);
      expect(await port().end(run.id, run.token, 'Withdrawn.', h.t + 1)).toBe(true);
      const working = await h.snap(run.id);
      expect(working.status).toBe('working');
      expect(working.statusMessage).toBe('Withdrawn.');
      expect(await h.store.answer(run.id, ALICE, { confirm: YES }, h.t + 2)).toEqual({
        ok: true,
        resumed: false,
      });
      expect(await h.store.claim('w2', LEASE, h.t + 3)).toBeUndefined();
    });

    it('refuses a run that no longer holds the task', async () => {
      const run = await h.running();
      expect(await port().ask(run.id, run.token + 1, { confirm: CONFIRM }, 'Waiting.', h.t)).toBe(false);
      expect((await h.snap(run.id)).status).toBe('working');
      expect(await port().end(run.id, run.token + 1, 'Withdrawn.', h.t)).toBe(false);
    });

    it('lets a cancel reach the waiting run through its lease renewal', async () => {
      const run = await h.running();
      await port().ask(run.id, run.token, { confirm: CONFIRM }, 'Waiting.', h.t);
      expect(await h.store.requestCancel(run.id, ALICE, h.t + 1)).toMatchObject({ ok: true, running: true });
      expect(await h.store.renew(run.id, run.token, LEASE, h.t + 2)).toEqual({
        held: true,
        cancelRequested: true,
      });
      await port().end(run.id, run.token, 'Withdrawn.', h.t + 3);
      expect(await h.store.finish(run.id, run.token, { kind: 'cancelled' }, h.t + 4)).toBe(true);
      expect((await h.snap(run.id)).status).toBe('cancelled');
    });

    it('makes the task claimable once the lease lapses, answered or not (its process is gone)', async () => {
      const unanswered = await h.running();
      await port().ask(unanswered.id, unanswered.token, { confirm: CONFIRM }, 'Waiting.', h.t);
      // While the lease lives, nothing to revive.
      expect(await port().revive(h.t + LEASE - 1, 10)).toBe(0);
      expect(await port().revive(h.t + LEASE + 1, 10)).toBe(1);
      const revived = await h.snap(unanswered.id, h.t + LEASE + 1);
      expect(revived.status).toBe('working');
      expect(revived.inputRequests ?? {}).toEqual({});
      const again = must(await h.store.claim('w2', LEASE, h.t + LEASE + 2), 'claim');
      expect(again).toMatchObject({ id: unanswered.id, takenOver: true });
      expect(again.askedKeys).toEqual(['confirm']);
      expect(again.answers).toEqual({});
      // The run that asked is gone: its writes are refused.
      expect(await port().end(unanswered.id, unanswered.token, 'Withdrawn.', h.t + LEASE + 3)).toBe(false);
      expect(
        await h.store.finish(again.id, again.token, { kind: 'completed', result: {} }, h.t + LEASE + 4),
      ).toBe(true);

      h.t += 10 * LEASE;
      const created = await h.store.create(newTask({ createdAt: h.t }));
      const answered = await h.claim();
      expect(answered.id).toBe(created.id);
      await port().ask(answered.id, answered.token, { confirm: CONFIRM }, 'Waiting.', h.t);
      await h.store.answer(answered.id, ALICE, { confirm: YES }, h.t + 1);
      expect(await h.store.claim('w2', LEASE, h.t + LEASE - 1)).toBeUndefined();
      const taken = must(await h.store.claim('w2', LEASE, h.t + LEASE + 1), 'claim');
      expect(taken).toMatchObject({ id: answered.id, takenOver: true, answers: { confirm: YES } });
    });
  });
}
