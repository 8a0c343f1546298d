// The TaskStore contract: the bytes an owner's kept tasks store are counted as every write stores them and freed
// when the tasks are purged; the byte quota refuses a creation and a step write that would pass it, writing nothing.
import { describe, expect, it } from 'vitest';
import { ActiveLimitError } from '../../tasks/errors.js';
import type { NewTask } from '../../tasks/task.js';
import { ALICE, BOB, LEASE, newTask, type ContractStore } from './harness.contract.js';

/** UTF-8 bytes of a value's JSON: what an unsealed store keeps of it. */
const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');

export function storedBytesContract(h: ContractStore): void {
  const stored = (owner = ALICE): Promise<number> => h.store.storedBytes(owner);

  describe('the bytes an owner stores', () => {
    it('count arguments, step values, input requests, answers and results, and are freed by the purge', async () => {
      const args = { text: 'héllo wörld', n: 1 };
      const run = await h.running({ args, ttlMs: 10_000 });
      let expected = bytesOf(args);
      expect(await stored()).toBe(expected);
      expect(await h.store.saveStep(run.id, run.token, 'fetch', { rows: [1, 2, 3] }, h.t)).toBe(true);
      expected += bytesOf({ rows: [1, 2, 3] });
      const request = { method: 'elicitation/create', params: { message: 'Go on?' } };
      const asking = { kind: 'input_required', requests: { go: request } } as const;
      expect(await h.store.finish(run.id, run.token, asking, h.t)).toBe(true);
      expected += bytesOf(request);
      expect(await stored()).toBe(expected);
      const answer = { action: 'accept', content: { ok: true } };
      await h.store.answer(run.id, ALICE, { go: answer }, h.t);
      expected += bytesOf(answer);
      const again = await h.claim();
      const result = { content: [{ type: 'text', text: 'done' }] };
      expect(await h.store.finish(again.id, again.token, { kind: 'completed', result }, h.t)).toBe(true);
      expected += bytesOf(result);
      expect(await stored()).toBe(expected);
      // Another owner counts apart; a purge frees what the purged tasks stored, and only that.
      await h.store.create(newTask({ owner: BOB, createdAt: h.t, ttlMs: 60_000 }));
      expect(await stored(BOB)).toBe(bytesOf(newTask().args));
      expect(await h.store.purge(h.t + 10_000, 0)).toBe(1);
      expect(await stored()).toBe(0);
      expect(await stored(BOB)).toBe(bytesOf(newTask().args));
    });
  });

  describe('the stored-bytes limit', () => {
    const TASK_BYTES = bytesOf(newTask().args);
    const LIMIT = 5 * TASK_BYTES;
    const limited = (overrides: Partial<NewTask> = {}): NewTask =>
      newTask({ storedBytesLimit: LIMIT, createdAt: h.t, ...overrides });

    it('refuses a creation that would pass it; a retried call still gets its task, and a purge makes room', async () => {
      const first = await h.store.create(limited({ idempotencyKey: 'k-1', ttlMs: 1_000 }));
      for (let i = 1; i < 5; i++) await h.store.create(limited({ ttlMs: 60_000 }));
      const refusal = await h.store.create(limited()).catch((err: unknown) => err);
      expect(refusal).toBeInstanceOf(ActiveLimitError);
      expect(refusal).toMatchObject({ quota: 'stored-bytes', limit: LIMIT });
      // Arguments larger than what is left are refused too, whoever else has room.
      await expect(h.store.create(limited({ owner: BOB }))).resolves.toMatchObject({ status: 'working' });
      await expect(
        h.store.create(limited({ owner: BOB, args: { text: 'x'.repeat(LIMIT) } })),
      ).rejects.toMatchObject({ quota: 'stored-bytes' });
      expect((await h.store.create(limited({ idempotencyKey: 'k-1' }))).id).toBe(first.id);
      expect(await h.store.purge(h.t + 1_000, 0)).toBe(1);
      await expect(h.store.create(limited({ createdAt: h.t + 1_000 }))).resolves.toMatchObject({
        status: 'working',
      });
    });

    it('lets exactly what fits through when creations race on one instance', async () => {
      const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => h.store.create(limited())));
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(5);
      for (const o of outcomes)
        if (o.status === 'rejected') expect(o.reason).toMatchObject({ quota: 'stored-bytes' });
      expect(await stored()).toBe(LIMIT);
    });

    it('in one batch with answers gathered before creation, keeps what fits with its answers and nothing of the rest', async () => {
      const answer = { action: 'accept', content: { ok: true } };
      const withAnswer = (): NewTask => limited({ answers: { go: answer } });
      const each = TASK_BYTES + bytesOf(answer);
      const fit = Math.floor(LIMIT / each);
      const outcomes = await Promise.allSettled(
        Array.from({ length: fit + 3 }, (_, i) => h.store.create(i % 2 === 0 ? withAnswer() : limited())),
      );
      const created = outcomes.filter((o) => o.status === 'fulfilled').length;
      expect(created).toBeGreaterThanOrEqual(fit);
      expect(created).toBeLessThan(fit + 3);
      for (const o of outcomes)
        if (o.status === 'rejected') expect(o.reason).toMatchObject({ quota: 'stored-bytes' });
      const kept = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []));
      const bytes = kept.reduce((n, i) => n + (i % 2 === 0 ? each : TASK_BYTES), 0);
      expect(await stored()).toBe(bytes);
      expect(bytes).toBeLessThanOrEqual(LIMIT);
      // A batch of another owner that fits whole, with and without answers: counted as it is stored.
      await Promise.all([
        h.store.create(limited({ owner: BOB, answers: { go: answer } })),
        h.store.create(limited({ owner: BOB })),
      ]);
      expect(await stored(BOB)).toBe(each + TASK_BYTES);
    });

    it('on two instances racing, passes it by no more than one side adds, and refuses once it is reached', async () => {
      if (h.openPeer === undefined) return;
      const peer = await h.openPeer();
      try {
        // Each side alone would fit 5; together they may not store more than one side's share beyond the limit.
        const outcomes = await Promise.allSettled(
          Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? h.store : peer).create(limited())),
        );
        const created = outcomes.filter((o) => o.status === 'fulfilled').length;
        expect(created).toBeGreaterThanOrEqual(5);
        expect(created).toBeLessThanOrEqual(5 + 6);
        for (const o of outcomes)
          if (o.status === 'rejected') expect(o.reason).toMatchObject({ quota: 'stored-bytes' });
        expect(await stored()).toBe(created * TASK_BYTES);
        for (const side of [h.store, peer])
          await expect(side.create(limited())).rejects.toMatchObject({ quota: 'stored-bytes' });
        expect(await stored()).toBe(created * TASK_BYTES);
      } finally {
        await peer.close();
      }
    });

    it('refuses a step value that would pass it, writing nothing, and keeps the lease', async () => {
      const run = await h.running();
      const room = LIMIT - TASK_BYTES;
      const big = 'x'.repeat(room); // its JSON has two quotes more than there is room for
      const options = { storedBytesLimit: LIMIT };
      const refusal = await h.store
        .saveStep(run.id, run.token, 'big', big, h.t, options)
        .catch((e: unknown) => e);
      expect(refusal).toBeInstanceOf(ActiveLimitError);
      expect(refusal).toMatchObject({ quota: 'stored-bytes', limit: LIMIT });
      expect(await stored()).toBe(TASK_BYTES);
      const fits = 'x'.repeat(room - 2);
      expect(await h.store.saveStep(run.id, run.token, 'fits', fits, h.t, options)).toBe(true);
      expect(await stored()).toBe(LIMIT);
      // A lost lease is still a lost lease, not a refusal.
      expect(await h.store.saveStep(run.id, run.token + 1, 'late', 1, h.t, options)).toBe(false);
      const replay = await h.store.claim('w2', LEASE, h.t + LEASE + 1);
      expect(replay?.steps).toEqual({ fits });
    });
  });
}
