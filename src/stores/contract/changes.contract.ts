// The TaskStore contract: The change feed, the snapshots committed changes carry, and owner listings.
import { describe, expect, it } from 'vitest';
import type { TaskChange } from '../../tasks/store.js';
import type { TaskSnapshot } from '../../tasks/task.js';
import { ALICE, BOB, newTask, OTHER_TENANT, T0, type ContractStore } from './harness.contract.js';

export function changesContract(h: ContractStore): void {
  describe('change feed', () => {
    it('reports creation, resumption and cancellation requests', async (ctx) => {
      const feed = h.store.changes;
      if (feed === undefined) return ctx.skip();
      const seen: TaskChange[] = [];
      const unsubscribe = feed.subscribe((c) => seen.push(c));
      const task = await h.store.create(newTask());
      expect(seen).toContainEqual(expect.objectContaining({ taskId: task.id, runnable: true }));

      await h.suspend(['k']);
      seen.length = 0;
      await h.store.answer(task.id, ALICE, { k: { action: 'accept' } }, h.t);
      expect(seen).toContainEqual(expect.objectContaining({ taskId: task.id, runnable: true }));

      const run = await h.claim();
      seen.length = 0;
      await h.store.requestCancel(task.id, ALICE, h.t + 1);
      expect(seen).toContainEqual(expect.objectContaining({ taskId: task.id, cancelRequested: true }));

      unsubscribe();
      seen.length = 0;
      await h.store.finish(run.id, run.token, { kind: 'cancelled' }, h.t + 2);
      await h.store.create(newTask());
      expect(seen).toEqual([]);
    });
  });

  describe('committed snapshots', () => {
    it('numbers every write, and carries in its changes only snapshots equal to what get then answers', async () => {
      const seen: TaskChange[] = [];
      const unsubscribe = h.store.changes?.subscribe((c) => seen.push(c));
      const revisions: (number | undefined)[] = [];
      /** After a write of `id`: its changes' committed snapshots are what get answers now. */
      const check = async (id: string, at: number): Promise<void> => {
        const now = await h.snap(id, at);
        revisions.push(now.revision);
        for (const c of seen.splice(0)) {
          if (c.committed === undefined) continue;
          expect(c.taskId).toBe(id);
          expect(c.committed.snapshot()).toEqual(now);
          expect(c.committed.revision).toBe(now.revision);
          expect(c.committed.expiresAt).toBe(now.ttlMs === null ? null : now.createdAt + now.ttlMs);
        }
      };
      const task = await h.store.create(newTask({ createdAt: h.t }));
      await check(task.id, h.t);
      const first = await h.claim('w1', h.t);
      await check(task.id, h.t);
      expect(await h.store.setStatusMessage(task.id, first.token, 'Halfway.', h.t + 1)).toBe(true);
      await check(task.id, h.t + 1);
      const requests = { k: { method: 'elicitation/create', key: 'k' } };
      await h.store.finish(task.id, first.token, { kind: 'input_required', requests }, h.t + 2);
      await check(task.id, h.t + 2);
      await h.store.answer(task.id, ALICE, { k: { action: 'accept' } }, h.t + 3);
      await check(task.id, h.t + 3);
      const second = await h.claim('w1', h.t + 4);
      await check(task.id, h.t + 4);
      await h.store.finish(task.id, second.token, { kind: 'completed', result: { n: 2 } }, h.t + 5);
      await check(task.id, h.t + 5);

      const waiting = await h.store.create(newTask({ createdAt: h.t + 6 }));
      await check(waiting.id, h.t + 6);
      await h.store.requestCancel(waiting.id, ALICE, h.t + 7);
      await check(waiting.id, h.t + 7);
      unsubscribe?.();

      // A store that numbers its snapshots raises the number with every write.
      if (revisions[0] !== undefined) {
        const byTask = [revisions.slice(0, 7), revisions.slice(7)];
        for (const list of byTask) {
          for (let i = 1; i < list.length; i++) expect(list[i]).toBeGreaterThan(list[i - 1] as number);
        }
      } else expect(revisions.every((r) => r === undefined)).toBe(true);
    });
  });

  describe('listOwned', () => {
    it("pages through only the owner's unexpired tasks in creation order", async (ctx) => {
      const list = h.store.listOwned?.bind(h.store);
      if (list === undefined) return ctx.skip();
      // Two tasks share a creation time: the id breaks the tie.
      const mine = [T0 + 3, T0 + 1, T0 + 1, T0 + 2, T0 + 5].map((createdAt) => newTask({ createdAt }));
      for (const task of mine) await h.store.create(task);
      await h.store.create(newTask({ owner: BOB, createdAt: T0 + 1 }));
      await h.store.create(newTask({ owner: OTHER_TENANT, createdAt: T0 + 1 }));
      const gone = await h.store.create(newTask({ createdAt: T0, ttlMs: 10 }));
      const expected = [...mine]
        .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .map((task) => task.id);

      const seen: string[] = [];
      let after: { createdAt: number; id: string } | undefined;
      for (let page = 0; page < 10; page++) {
        const got = await list(ALICE, after === undefined ? { limit: 2 } : { after, limit: 2 }, T0 + 100);
        expect(got.length).toBeLessThanOrEqual(2);
        if (got.length === 0) break;
        seen.push(...got.map((s) => s.id));
        const last = got[got.length - 1] as TaskSnapshot;
        after = { createdAt: last.createdAt, id: last.id };
      }
      expect(seen).toEqual(expected);
      expect(seen).not.toContain(gone.id);
      expect((await list(BOB, { limit: 10 }, T0 + 100)).map((s) => s.id)).toHaveLength(1);
      expect(await list({ tenant: 'nobody', principal: 'alice' }, { limit: 10 }, T0 + 100)).toEqual([]);
    });

    it('reports current status and outcome, never input requests', async (ctx) => {
      const list = h.store.listOwned?.bind(h.store);
      if (list === undefined) return ctx.skip();
      const done = await h.store.create(newTask({ createdAt: h.t }));
      const asking = await h.store.create(newTask({ createdAt: h.t + 1 }));
      const first = await h.claim('w1', h.t);
      expect(first.id).toBe(done.id);
      await h.store.finish(done.id, first.token, { kind: 'completed', result: { isError: true } }, h.t + 2);
      const second = await h.claim('w1', h.t + 3);
      await h.store.finish(second.id, second.token, { kind: 'input_required', requests: { k: {} } }, h.t + 3);
      const got = await list(ALICE, { limit: 10 }, h.t + 4);
      expect(got.map((s) => [s.id, s.status])).toEqual([
        [done.id, 'completed'],
        [asking.id, 'input_required'],
      ]);
      expect(got[0]?.result).toEqual({ isError: true });
      expect(got[0]?.updatedAt).toBe(h.t + 2);
      expect(got[1]?.inputRequests).toEqual({});
    });
  });
}
