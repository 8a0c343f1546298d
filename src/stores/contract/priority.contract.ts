// The TaskStore contract: priorities (NewTask.priority). When an owner's turn in line comes, its waiting task of the
// highest priority is claimed (among equals, the first in line): priorities reorder an owner's own tasks, while owners
// that wait still take turns, and a task of another owner never waits behind a high-priority backlog.
import { describe, expect, it } from 'vitest';
import type { ClaimScope } from '../../tasks/store.js';
import type { NewTask, TaskOwner } from '../../tasks/task.js';
import { ALICE, BOB, LEASE, newTask, type ContractStore } from './harness.contract.js';

export function priorityContract(h: ContractStore): void {
  describe('priorities', () => {
    const create = async (owner: TaskOwner, overrides: Partial<NewTask> = {}): Promise<string> => {
      h.t += 1;
      return (await h.store.create(newTask({ owner, createdAt: h.t, ...overrides }))).id;
    };
    const createMany = async (owner: TaskOwner, n: number, priority?: number): Promise<string[]> => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push(await create(owner, { priority }));
      return ids;
    };
    const claimAll = async (scope?: ClaimScope): Promise<string[]> => {
      const out: string[] = [];
      for (let i = 0; i < 100; i++) {
        const c = await h.store.claim(`w${i}`, LEASE, h.t, scope);
        if (c === undefined) break;
        out.push(c.id);
      }
      return out;
    };

    it("claims an owner's tasks highest priority first, in line order among equals", async () => {
      const low = await createMany(ALICE, 4);
      const urgent = await create(ALICE, { priority: 10 });
      const soon = await create(ALICE, { priority: 5 });
      const last = await create(ALICE, { priority: -1 });
      const soonToo = await create(ALICE, { priority: 5 });
      expect(await claimAll()).toEqual([urgent, soon, soonToo, ...low, last]);
    });

    it("gives an owner's turn to its high-priority task while owners still take turns", async () => {
      const aliceLow = await createMany(ALICE, 10);
      const aliceHigh = await create(ALICE, { priority: 50 });
      const bob = await createMany(BOB, 4);
      const claimed = await claimAll();
      expect(claimed).toHaveLength(15);
      const isAlice = (id: string) => id === aliceHigh || aliceLow.includes(id);
      // Alice's high-priority task takes her next turn (the first), then the owners alternate while both wait.
      expect(claimed[0]).toBe(aliceHigh);
      expect(claimed.slice(0, 8).map(isAlice)).toEqual([true, false, true, false, true, false, true, false]);
      expect(claimed.filter((id) => aliceLow.includes(id))).toEqual(aliceLow);
      expect(claimed.filter((id) => bob.includes(id))).toEqual(bob);
    });

    it("does not let a high-priority backlog hold back another owner's task", async () => {
      const alice = await createMany(ALICE, 6, 100);
      const bob = await create(BOB, { priority: -100 });
      const claimed = await claimAll();
      expect(claimed.slice(0, 2)).toEqual([alice[0], bob]);
      expect(claimed.slice(2)).toEqual(alice.slice(1));
    });

    it('takes the highest priority among the tasks in a claim scope', async () => {
      const echo = await create(ALICE);
      const other = await create(ALICE, { tool: 'other', priority: 9 });
      const echoHigh = await create(ALICE, { priority: 3 });
      const scope: ClaimScope = { tools: { echo: [] } };
      expect(await claimAll(scope)).toEqual([echoHigh, echo]);
      expect(await claimAll()).toEqual([other]);
    });

    it('gives the turns of a batch claim to the highest priorities of each owner', async (ctx) => {
      if (h.store.claimBatch === undefined) return ctx.skip();
      const aliceLow = await createMany(ALICE, 3);
      const aliceHigh = await create(ALICE, { priority: 1 });
      const bob = await createMany(BOB, 3);
      const batch = await h.store.claimBatch('w', LEASE, h.t, 4);
      expect(new Set(batch.map((c) => c.id))).toEqual(new Set([aliceHigh, aliceLow[0], bob[0], bob[1]]));
    });
  });
}
