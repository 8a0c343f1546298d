// The TaskStore contract: slots held for a task's whole life (NewTask.concurrency.hold 'task'). The slot is taken at
// the task's first run and kept through its sleeps, input waits and lapsed leases (the task is replayed, still
// holding it); the task's ending frees it, whether a run ends it or a cancel or its expiry while it does not run.
import { describe, expect, it } from 'vitest';
import { slotWaitMessage, type ClaimedTask } from '../../tasks/task.js';
import type { TaskStore } from '../../tasks/store.js';
import { ALICE, LEASE, must, newTask, type ContractStore, taskHelpers } from './harness.contract.js';

const DEPLOY = { key: 'deploy', limit: 1, hold: 'task' } as const;
const completed = { kind: 'completed', result: { content: [], isError: false } } as const;

export function concurrencyHoldContract(h: ContractStore): void {
  describe('concurrency slots held until the task ends', () => {
    const { create, claimAll } = taskHelpers(h);
    const sweep = (): Promise<number> => must(h.store.freeSlots).call(h.store, h.t);
    const sleep = (run: ClaimedTask, ms: number) =>
      h.store.finish(
        run.id,
        run.token,
        { kind: 'waiting', until: h.t + ms, statusMessage: 'Sleeping.' },
        h.t,
      );

    it('keeps the slot while the task sleeps, waits for input or loses its lease; its ending frees it', async (ctx) => {
      if (h.store.freeSlots === undefined) return ctx.skip();
      const first = await create({ concurrency: DEPLOY });
      const second = await create({ concurrency: DEPLOY });
      // A task of the key that holds slots only while it runs waits too.
      const brief = await create({ concurrency: { key: 'deploy', limit: 1 } });
      const [run] = await claimAll();
      expect(run?.id).toBe(first);
      expect((await h.snap(second)).statusMessage).toBe(slotWaitMessage('deploy'));
      // It sleeps: the slot stays taken, and a sweep wakes nobody.
      expect(await sleep(must(run), 100)).toBe(true);
      expect(await sweep()).toBe(0);
      expect(await claimAll()).toEqual([]);
      // Its sleep is over: it runs again in its own slot, then asks for input, still holding it.
      h.t += 100;
      const again = await claimAll();
      expect(again.map((c) => c.id)).toEqual([first]);
      const ask = { q: { method: 'elicitation/create' } };
      const input = { kind: 'input_required', requests: ask } as const;
      expect(await h.store.finish(first, must(again[0]).token, input, h.t)).toBe(true);
      expect(await sweep()).toBe(0);
      expect(await h.store.answer(first, ALICE, { q: { action: 'accept' } }, h.t)).toMatchObject({
        ok: true,
      });
      // Its run's lease lapses: the task is replayed, and the slot is still its own.
      const crashed = await claimAll('dead');
      expect(crashed.map((c) => c.id)).toEqual([first]);
      h.t += LEASE + 1;
      expect(await sweep()).toBe(0);
      const replay = must((await claimAll('w2'))[0]);
      expect([replay.id, replay.takenOver]).toEqual([first, true]);
      // It ends: the slot frees, and the first waiting task of the key runs.
      expect(await h.store.finish(first, replay.token, completed, h.t)).toBe(true);
      expect((await claimAll()).map((c) => c.id)).toEqual([second]);
      expect((await h.snap(brief)).statusMessage).toBe(slotWaitMessage('deploy'));
    });

    it('frees the slot of a task that ends while it does not run: cancelled, or expired', async (ctx) => {
      if (h.store.freeSlots === undefined) return ctx.skip();
      const cancelled = await create({ concurrency: DEPLOY });
      const expiring = await create({ concurrency: DEPLOY, ttlMs: 1_000 });
      const last = await create({ concurrency: DEPLOY, ttlMs: 60_000 });
      const [run] = await claimAll();
      expect(run?.id).toBe(cancelled);
      expect(await sleep(must(run), 10_000)).toBe(true);
      // Cancelled while it sleeps: the sweep frees its slot for the next in line.
      expect(await h.store.requestCancel(cancelled, ALICE, h.t)).toMatchObject({
        ok: true,
        cancelledNow: true,
      });
      expect(await sweep()).toBe(1);
      const next = must((await claimAll())[0]);
      expect(next.id).toBe(expiring);
      expect(await sleep(next, 60_000)).toBe(true);
      expect(await claimAll()).toEqual([]);
      // Its TTL ends while it sleeps: it expires, and its slot frees too.
      h.t += 1_001;
      expect(await h.store.expire(h.t)).toBeGreaterThanOrEqual(1);
      expect(await sweep()).toBe(1);
      expect((await claimAll()).map((c) => c.id)).toEqual([last]);
    });
  });
}

/** After an upgrade (migration 22): a task that holds its slot until it ends keeps it while it sleeps. */
export async function expectHoldAfterUpgrade(store: TaskStore, now: number): Promise<void> {
  const key = { key: 'upgraded-hold', limit: 1, hold: 'task' } as const;
  const first = await store.create(newTask({ createdAt: now, concurrency: key }));
  const second = await store.create(newTask({ createdAt: now, concurrency: key }));
  let run: ClaimedTask | undefined;
  for (let i = 0; i < 20 && run?.id !== first.id; i++) run = await store.claim('w', LEASE, now);
  const sleeping = { kind: 'waiting', until: now + 10_000, statusMessage: 'Sleeping.' } as const;
  expect(await store.finish(first.id, must(run).token, sleeping, now)).toBe(true);
  for (let c = await store.claim('w', LEASE, now); c !== undefined; c = await store.claim('w', LEASE, now))
    expect(c.id).not.toBe(second.id);
  expect(await store.freeSlots?.(now)).toBe(0);
}
