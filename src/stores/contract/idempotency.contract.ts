// The TaskStore contract: Idempotency keys, also across two instances, and close.
import { describe, expect, it } from 'vitest';
import { IdempotencyConflictError } from '../../tasks/errors.js';
import type { NewTask } from '../../tasks/task.js';
import { ALICE, BOB, newTask, OTHER_TENANT, type ContractStore } from './harness.contract.js';

export function idempotencyContract(h: ContractStore): void {
  describe('idempotency keys', () => {
    const keyed = (overrides: Partial<NewTask> = {}): NewTask =>
      newTask({ idempotencyKey: 'deploy-42', createdAt: h.t, ...overrides });

    it('answers a creation whose key names a live task of the owner and tool with that task', async () => {
      const first = await h.store.create(keyed({ args: { a: 1, b: [1, { c: 2 }] } }));
      const retry = keyed({ args: { b: [1, { c: 2 }], a: 1 } });
      const again = await h.store.create(retry);
      expect(again.id).toBe(first.id);
      expect(await h.store.get(retry.id, ALICE, h.t)).toBe('not_found');
      expect(await h.store.countActive(ALICE)).toBe(1);
      const find = (args: NewTask['args']) =>
        h.store.findByIdempotencyKey(ALICE, 'echo', 'deploy-42', args, h.t);
      // The lookup answers as the creation does: the task for the same arguments, a conflict for others.
      expect(await find({ b: [1, { c: 2 }], a: 1 })).toEqual(await h.snap(first.id));
      await expect(find({ a: 2 })).rejects.toThrow(IdempotencyConflictError);
      // A finished task is still the key's task, with its outcome.
      const claimed = await h.claim();
      await h.store.finish(claimed.id, claimed.token, { kind: 'completed', result: { ok: true } }, h.t);
      expect(await h.store.create(keyed({ args: { a: 1, b: [1, { c: 2 }] } }))).toMatchObject({
        id: first.id,
        status: 'completed',
        result: { ok: true },
      });
    });

    it('refuses the key with other arguments, and creates nothing', async () => {
      const first = await h.store.create(keyed({ args: { n: 1 } }));
      const other = keyed({ args: { n: 2 } });
      await expect(h.store.create(other)).rejects.toThrow(IdempotencyConflictError);
      expect(await h.store.get(other.id, ALICE, h.t)).toBe('not_found');
      expect((await h.store.findByIdempotencyKey(ALICE, 'echo', 'deploy-42', { n: 1 }, h.t))?.id).toBe(
        first.id,
      );
    });

    it('scopes a key by owner and tool: others with the same key get tasks of their own', async () => {
      const mine = await h.store.create(keyed());
      const ids = new Set([mine.id]);
      for (const overrides of [{ owner: BOB }, { owner: OTHER_TENANT }, { tool: 'other' }])
        ids.add((await h.store.create(keyed(overrides))).id);
      expect(ids.size).toBe(4);
      const args = keyed().args;
      expect(await h.store.findByIdempotencyKey(BOB, 'other', 'deploy-42', args, h.t)).toBeUndefined();
      expect(await h.store.findByIdempotencyKey(ALICE, 'echo', 'another-key', args, h.t)).toBeUndefined();
    });

    it('gives the key of an expired task to a new one', async () => {
      const first = await h.store.create(keyed({ ttlMs: 1_000 }));
      // An expired holder answers nothing, whatever the arguments: the key goes to the next creation.
      const find = (args: NewTask['args'], now: number) =>
        h.store.findByIdempotencyKey(ALICE, 'echo', 'deploy-42', args, now);
      expect(await find({ other: true }, h.t + 1_000)).toBeUndefined();
      const second = await h.store.create(keyed({ createdAt: h.t + 1_000, args: { other: true } }));
      expect(second.id).not.toBe(first.id);
      expect(await h.store.get(first.id, ALICE, h.t + 1_001)).toBe('expired');
      expect((await find({ other: true }, h.t + 1_001))?.id).toBe(second.id);
    });

    it('makes concurrent creations with one key, here and on a second instance, one task', async () => {
      const peer = h.openPeer === undefined ? h.store : await h.openPeer();
      try {
        const created = await Promise.all(
          Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? h.store : peer).create(keyed())),
        );
        expect(new Set(created.map((c) => c.id)).size).toBe(1);
        expect(await h.store.countActive(ALICE)).toBe(1);
        expect(await h.store.countRunnable(h.t)).toBe(1);
      } finally {
        if (peer !== h.store) await peer.close();
      }
    });
  });

  describe('close', () => {
    it('resolves, and resolves again when called twice', async () => {
      await h.store.create(newTask());
      await expect(h.store.close()).resolves.toBeUndefined();
      await expect(h.store.close()).resolves.toBeUndefined();
    });
  });
}
