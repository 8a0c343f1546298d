// The TaskStore contract: claims are fair across owners. One owner's backlog does not hold back another owner's task
// (it goes to the head of the line), owners that both wait take turns, and an owner's own tasks keep their order. A
// task whose wait ends (a sleep or backoff come due, its input answered) queues again like a new task: a backlog
// parked in waits and woken at once does not go ahead of the other owners' tasks, and tasks woken again and again
// (pollers) queue behind whoever waits at the head instead of taking it.
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

    it("claims another owner's task second, behind a backlog of 40 and with 3 of them running", async () => {
      const alice = await createInOrder(ALICE, 40);
      const running = await claimMany(3);
      h.t += 1;
      const [bobs] = await create(BOB, 1);
      expect(running).toHaveLength(3);
      // The running tasks hold no place: Bob's task takes the head, behind the first of Alice's still waiting.
      expect(await claimMany(2)).toEqual([alice[3], bobs?.id]);
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

    /**
     * One worker slot shared by two pollers of ALICE, each polling (a 1 ms sleep) again and again and woken while the
     * other runs, and a quick task of `victim` created while one of them runs: the claims it takes until the quick task
     * was claimed (Infinity: not within 20).
     */
    const claimBetweenPollers = async (victim: TaskOwner): Promise<number> => {
      const pollers = await createInOrder(ALICE, 2);
      const poll = async (id: string, token: number): Promise<void> => {
        const wait = { kind: 'waiting', until: h.t + 1, statusMessage: 'Polling.' } as const;
        expect(await h.store.finish(id, token, wait, h.t)).toBe(true);
      };
      // The first poller polls; the second runs.
      const first = must(await h.store.claim('slot', 60_000, h.t));
      expect(first.id).toBe(pollers[0]);
      await poll(first.id, first.token);
      let running = must(await h.store.claim('slot', 60_000, h.t));
      expect(running.id).toBe(pollers[1]);
      h.t += 1;
      const [quick] = await create(victim, 1);
      for (let claims = 1; claims <= 20; claims++) {
        // The running poller polls again; the other's poll is over by now.
        await poll(running.id, running.token);
        running = must(await h.store.claim('slot', 60_000, h.t));
        if (running.id === quick?.id) return claims;
        expect(pollers).toContain(running.id);
        h.t += 1;
      }
      return Infinity;
    };

    /** Another slot held by a long task of `owner`. */
    const longTask = async (owner: TaskOwner): Promise<void> => {
      h.t += 1;
      const [long] = await create(owner, 1);
      expect((await h.store.claim('long', 600_000, h.t))?.id).toBe(long?.id);
      h.t += 1;
    };

    it("claims another owner's task within two claims between two pollers alternating on one slot", async () => {
      expect(await claimBetweenPollers(BOB)).toBeLessThanOrEqual(2);
    });

    it("claims another owner's task within two claims between pollers while that owner's long task runs", async () => {
      await longTask(OTHER_TENANT);
      expect(await claimBetweenPollers(OTHER_TENANT)).toBeLessThanOrEqual(2);
    });

    it("claims another owner's two tasks between one poller's runs while a third owner's long task runs", async () => {
      // A running task does not hold the head of the line: the poller, woken there each time, would pass Bob's second
      // task (placed behind his first) for ever.
      await longTask(OTHER_TENANT);
      const [poller] = await createInOrder(ALICE, 1);
      let running = must(await h.store.claim('slot', 60_000, h.t));
      const quick = new Set((await create(BOB, 2)).map((t) => t.id));
      const done = { kind: 'completed', result: { content: [] } } as const;
      let claims = 0;
      while (quick.size > 0 && claims < 20) {
        const wait = { kind: 'waiting', until: h.t + 1, statusMessage: 'Polling.' } as const;
        const ending = running.id === poller ? wait : done;
        expect(await h.store.finish(running.id, running.token, ending, h.t)).toBe(true);
        h.t += 1; // the poll is over by the next claim
        running = must(await h.store.claim('slot', 60_000, h.t));
        quick.delete(running.id);
        claims++;
      }
      expect(quick.size).toBe(0);
      expect(claims).toBeLessThanOrEqual(3);
    });

    it("puts a task behind its owner's waiting tasks only, not behind one of them running", async () => {
      // Alice's task is back in line at its early place: its run crashed and its lease lapsed.
      const [crashed] = await createInOrder(ALICE, 1);
      expect((await h.store.claim('crashing', 100, h.t))?.id).toBe(crashed);
      h.t += 50;
      await longTask(BOB);
      h.t += 1_000;
      const [quick] = await create(BOB, 1);
      // Had Bob's long run counted, his quick task would go behind it, and Alice's new tasks ahead of it.
      await createInOrder(ALICE, 5);
      expect(await claimMany(2)).toEqual([crashed, quick?.id]);
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
