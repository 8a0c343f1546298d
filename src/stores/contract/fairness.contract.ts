// The TaskStore contract: claims are fair across owners. One owner's backlog does not hold back another owner's task
// (it is claimed next), owners that both wait take turns, and an owner's own tasks keep their order.
import { describe, expect, it } from 'vitest';
import type { TaskOwner } from '../../tasks/task.js';
import { ALICE, BOB, OTHER_TENANT, newTask, type ContractStore } from './harness.contract.js';

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

    it('spreads a backlog created in one batch too', async () => {
      await create(ALICE, 30);
      h.t += 1;
      const [bobs] = await create(BOB, 1);
      const claimed = await claimMany(2);
      expect(claimed).toContain(bobs?.id);
    });
  });
}
