// The TaskStore contract: the limits on an owner's unfinished and kept tasks hold under concurrent creations, here
// and on a second instance (another process or replica), and never refuse a retried call its key already answered.
import { describe, expect, it } from 'vitest';
import { ActiveLimitError } from '../../tasks/errors.js';
import type { NewTask } from '../../tasks/task.js';
import { ALICE, BOB, newTask, OTHER_TENANT, type ContractStore } from './harness.contract.js';

const LIMIT = 5;

export function quotaContract(h: ContractStore): void {
  describe('the active-task limit', () => {
    const limited = (overrides: Partial<NewTask> = {}): NewTask =>
      newTask({ activeLimit: LIMIT, createdAt: h.t, ...overrides });

    it('lets exactly the limit through when many creations race, here and on a second instance', async () => {
      const peer = h.openPeer === undefined ? h.store : await h.openPeer();
      try {
        const outcomes = await Promise.allSettled(
          Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? h.store : peer).create(limited())),
        );
        const created = outcomes.filter((o) => o.status === 'fulfilled');
        const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
        expect(created).toHaveLength(LIMIT);
        expect(refused).toHaveLength(24 - LIMIT);
        for (const err of refused) expect(err).toBeInstanceOf(ActiveLimitError);
        expect(await h.store.countActive(ALICE)).toBe(LIMIT);
      } finally {
        if (peer !== h.store) await peer.close();
      }
    });

    it('counts only unfinished tasks of the same owner, and still answers a retried call at the limit', async () => {
      const first = await h.store.create(limited({ idempotencyKey: 'k-1' }));
      for (let i = 1; i < LIMIT; i++) await h.store.create(limited());
      await expect(h.store.create(limited())).rejects.toBeInstanceOf(ActiveLimitError);
      // The same call again: its task, not a refusal.
      expect((await h.store.create(limited({ idempotencyKey: 'k-1' }))).id).toBe(first.id);
      // Another owner has a limit of its own.
      await expect(h.store.create(limited({ owner: BOB }))).resolves.toMatchObject({ status: 'working' });
      // A task that ends makes room.
      const claimed = await h.claim();
      await h.store.finish(claimed.id, claimed.token, { kind: 'completed', result: { ok: true } }, h.t);
      await expect(h.store.create(limited())).resolves.toMatchObject({ status: 'working' });
    });
  });

  describe('the stored-task limit', () => {
    const kept = (overrides: Partial<NewTask> = {}): NewTask =>
      newTask({ storedLimit: LIMIT, createdAt: h.t, ...overrides });

    it('counts finished and cancelled tasks too, and refuses past the limit', async () => {
      const first = await h.store.create(kept({ idempotencyKey: 'k-1' }));
      const claimed = await h.claim();
      await h.store.finish(claimed.id, claimed.token, { kind: 'completed', result: { ok: true } }, h.t);
      const second = await h.store.create(kept());
      await h.store.requestCancel(second.id, ALICE, h.t);
      for (let i = 2; i < LIMIT; i++) await h.store.create(kept());
      expect(await h.store.countActive(ALICE)).toBe(LIMIT - 2);
      const refusal = await h.store.create(kept()).catch((err: unknown) => err);
      expect(refusal).toBeInstanceOf(ActiveLimitError);
      expect(refusal).toMatchObject({ quota: 'stored', limit: LIMIT });
      // A retried call still gets its task.
      expect((await h.store.create(kept({ idempotencyKey: 'k-1' }))).id).toBe(first.id);
      // Another owner keeps its own count.
      await expect(h.store.create(kept({ owner: BOB }))).resolves.toMatchObject({ status: 'working' });
    });

    it('lets exactly the limit through when many creations race, here and on a second instance', async () => {
      const peer = h.openPeer === undefined ? h.store : await h.openPeer();
      try {
        const outcomes = await Promise.allSettled(
          Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? h.store : peer).create(kept())),
        );
        expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(LIMIT);
        for (const o of outcomes)
          if (o.status === 'rejected') expect(o.reason).toMatchObject({ quota: 'stored' });
      } finally {
        if (peer !== h.store) await peer.close();
      }
    });
  });

  describe('the tenant limits', () => {
    const tenantWide = (overrides: Partial<NewTask> = {}): NewTask =>
      newTask({ tenantLimits: { active: LIMIT, stored: LIMIT + 2 }, createdAt: h.t, ...overrides });

    it("count every principal of the tenant, and no other tenant's", async () => {
      const finishOne = async (): Promise<void> => {
        const claimed = await h.claim();
        await h.store.finish(claimed.id, claimed.token, { kind: 'completed', result: {} }, h.t);
      };
      for (let i = 0; i < LIMIT; i++) await h.store.create(tenantWide({ owner: i % 2 === 0 ? ALICE : BOB }));
      const refusal = await h.store.create(tenantWide({ owner: BOB })).catch((err: unknown) => err);
      expect(refusal).toMatchObject({ quota: 'tenant-active', limit: LIMIT });
      // Ended tasks leave the active count but stay in the stored one.
      await finishOne();
      await finishOne();
      await h.store.create(tenantWide({ owner: ALICE }));
      await h.store.create(tenantWide({ owner: BOB }));
      await finishOne();
      await expect(h.store.create(tenantWide({ owner: ALICE }))).rejects.toMatchObject({
        quota: 'tenant-stored',
        limit: LIMIT + 2,
      });
      // Another tenant has limits of its own.
      await expect(h.store.create(tenantWide({ owner: OTHER_TENANT }))).resolves.toMatchObject({
        status: 'working',
      });
    });

    it('let exactly the limit through when two principals race on two instances', async () => {
      const peer = h.openPeer === undefined ? h.store : await h.openPeer();
      try {
        const outcomes = await Promise.allSettled(
          Array.from({ length: 16 }, (_, i) =>
            (i % 2 === 0 ? h.store : peer).create(tenantWide({ owner: i % 4 < 2 ? ALICE : BOB })),
          ),
        );
        expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(LIMIT);
      } finally {
        if (peer !== h.store) await peer.close();
      }
    });
  });
}
