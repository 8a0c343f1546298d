// The TaskStore contract: claims are fair across owners. One owner's backlog does not hold back another owner's task
// (it is claimed next), owners that both wait take turns, and an owner's own tasks keep their order. A task whose
// wait ends (a sleep or backoff come due, its input answered) queues again like a new task: a backlog parked in
// waits and woken at once does not go ahead of the other owners' tasks.
import { describe, expect, it } from 'vitest';
import type { TaskOwner } from '../../tasks/task.js';
import { ALICE, BOB, OTHER_TENANT, must, newTask, type ContractStore } from './harness.contract.js';

export function fairnessContract(h: ContractStore): void {
  describe('fair claiming', () => {
    const create = (owner: TaskOwner, n: number) =>
      Promise.all(Array.from({ length: n }, () => h.store.create(newTask({ owner, createdAt: h.t }))));
    const createInOrder = async (owner: TaskOwner, n: number): Promise<string[]> => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        h.t += 1;
        ids.push((await h.store.create(newTask({ owner, createdAt: h.t }))).id);
      }
      return ids;
    };
    const ownerOf = new Map<string, string>();
    const claimMany = async (n: number): Promise<string[]> => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) {
        const c = await h.store.claim(`w${i}`, 60_000, h.t);
        if (c === undefined) break;
        out.push(c.id);
        ownerOf.set(c.id, c.owner.principal + '@' + c.owner.tenant);
      }
      return out;
    };

    it("claims another owner's task next, behind a backlog of 40 and with 3 of them running", async () => {
      await createInOrder(ALICE, 40);
      const running = await claimMany(3);
      h.t += 1;
      const [bobs] = await create(BOB, 1);
      expect(running).toHaveLength(3);
      expect(await claimMany(1)).toEqual([bobs?.id]);
    });

    it('lets owners that both wait take turns, each in its own order', async () => {
      const alice = await createInOrder(ALICE, 12);
      const bob = await createInOrder(BOB, 12);
      const carol = await createInOrder(OTHER_TENANT, 12);
      const claimed = await claimMany(36);
      expect(claimed).toHaveLength(36);
      // Each owner's tasks in the order they were created.
      for (const own of [alice, bob, carol]) expect(claimed.filter((id) => own.includes(id))).toEqual(own);
      // In every window of 6 claims, each owner has 2.
      for (let i = 0; i + 6 <= 36; i += 6) {
        const window = claimed.slice(i, i + 6);
        for (const own of [alice, bob, carol])
          expect(window.filter((id) => own.includes(id)).length, `claims ${i}..${i + 5}`).toBe(2);
      }
    });

    /** Creates `n` tasks of `owner`, claims them all, and ends each run waiting until `until`. */
    const parkInWaits = async (owner: TaskOwner, n: number, until: number): Promise<string[]> => {
      const ids = await createInOrder(owner, n);
      for (const id of ids) {
        const run = await h.store.claim('w', 60_000, h.t);
        expect(run?.id).toBe(id);
        const waiting = { kind: 'waiting', until, statusMessage: 'Retrying.' } as const;
        expect(await h.store.finish(id, run?.token ?? 0, waiting, h.t)).toBe(true);
      }
      return ids;
    };

    it("puts tasks that wake from sleeps and backoffs together behind another owner's task queued meanwhile", async () => {
      const alice = await parkInWaits(ALICE, 40, h.t + 1_000);
      h.t += 10;
      const [bobs] = await create(BOB, 1);
      h.t += 1_000;
      const claimed = await claimMany(41);
      expect(claimed.indexOf(must(bobs).id)).toBeLessThan(2);
      expect(claimed.filter((id) => id !== bobs?.id)).toEqual(alice);
    });

    it("claims another owner's task created after more waits wake together than one claim requeues", async () => {
      const alice = await parkInWaits(ALICE, 150, h.t + 1_000);
      h.t += 1_001;
      const [bobs] = await create(BOB, 1);
      const claimed = await claimMany(200);
      expect(claimed.indexOf(must(bobs).id)).toBeLessThan(2);
      // Every woken task is claimed once, those the first claim did not requeue too.
      expect(claimed.filter((id) => id !== bobs?.id).sort()).toEqual([...alice].sort());
      expect(await h.store.countRunnable(h.t)).toBe(0);
    });

    it("puts tasks whose input is answered behind another owner's task queued meanwhile", async () => {
      const alice = await createInOrder(ALICE, 40);
      for (const id of alice) {
        const run = await h.store.claim('w', 60_000, h.t);
        expect(run?.id).toBe(id);
        const requests = { q: { method: 'elicitation/create' } };
        expect(await h.store.finish(id, run?.token ?? 0, { kind: 'input_required', requests }, h.t)).toBe(
          true,
        );
      }
      h.t += 10;
      const [bobs] = await create(BOB, 1);
      h.t += 1_000;
      for (const id of alice)
        expect(await h.store.answer(id, ALICE, { q: { action: 'accept' } }, h.t)).toEqual({
          ok: true,
          resumed: true,
        });
      const claimed = await claimMany(41);
      expect(claimed.indexOf(must(bobs).id)).toBeLessThan(2);
      expect(claimed.filter((id) => id !== bobs?.id)).toEqual(alice);
    });

    it('spreads a backlog created in one batch too', async () => {
      await create(ALICE, 30);
      h.t += 1;
      const [bobs] = await create(BOB, 1);
      const claimed = await claimMany(2);
      expect(claimed).toContain(bobs?.id);
    });
  });
}
