// The TaskStore contract: slots taken by holders other than a task's claim (acquireSlot, releaseSlot): a step of a
// run, counted while its run holds its lease, and a call that runs within its request, counted until its `until`.
// They count together with the slots runs hold, a freed one wakes the key's parked tasks, a lapsed one is free.
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { slotWaitMessage, type ClaimedTask } from '../../tasks/task.js';
import type { SlotHolder, TaskStore } from '../../tasks/store.js';
import { mostAtOnce } from './concurrency.contract.js';
import {
  LEASE,
  must,
  newTask,
  type ContractStore,
  type ContractTaskStore,
  taskHelpers,
} from './harness.contract.js';

const completed = { kind: 'completed', result: { content: [], isError: false } } as const;

/** A call's holder of a slot of `key` (limit `limit`) until `until`. */
const call = (id: string, until: number, key = 'payments', limit = 2): SlotHolder => ({
  id,
  slot: { key, limit },
  until,
});

/** A step of `run` holding a slot of `key`. */
const step = (run: ClaimedTask, name: string, key = 'payments', limit = 2): SlotHolder => ({
  id: `${run.id}:${run.token}:${name}`,
  slot: { key, limit },
  run: { taskId: run.id, token: run.token },
});

export function concurrencyHoldersContract(h: ContractStore): void {
  describe('concurrency slots of steps and calls within their request', () => {
    const { create } = taskHelpers(h);
    const acquire = (holder: SlotHolder, at = h.t): Promise<boolean> =>
      must(h.store.acquireSlot).call(h.store, holder, at);
    const release = (id: string, at = h.t): Promise<void> => must(h.store.releaseSlot).call(h.store, id, at);

    it('counts holders together with the slots runs hold, and a freed holder wakes a parked task', async (ctx) => {
      if (h.store.acquireSlot === undefined) return ctx.skip();
      const first = await create({ concurrency: { key: 'payments', limit: 2 } });
      const run = await h.claim();
      expect(run.id).toBe(first);
      // One slot left: a call takes it, and the next call and a step of another run find the key full.
      expect(await acquire(call('call-1', h.t + 60_000))).toBe(true);
      expect(await acquire(call('call-2', h.t + 60_000))).toBe(false);
      const other = await h.running();
      expect(await acquire(step(other, 'charge'))).toBe(false);
      // Taking again under the same id renews, even when the key is full.
      expect(await acquire(call('call-1', h.t + 120_000))).toBe(true);
      // A task of the key finds it full and is parked.
      const parked = await create({ concurrency: { key: 'payments', limit: 2 } });
      expect(await h.store.claim('w1', LEASE, h.t)).toBeUndefined();
      expect((await h.snap(parked)).statusMessage).toBe(slotWaitMessage('payments'));
      // The call ends: its slot frees, and the parked task runs.
      await release('call-1');
      const next = must(await h.store.claim('w2', LEASE, h.t));
      expect(next.id).toBe(parked);
      // Full again (two runs): the step waits; a run's ending lets it take the slot.
      expect(await acquire(step(other, 'charge'))).toBe(false);
      expect(await h.store.finish(run.id, run.token, completed, h.t)).toBe(true);
      expect(await acquire(step(other, 'charge'))).toBe(true);
      // Releasing twice, or a holder that never held, does nothing.
      await release(step(other, 'charge').id);
      await release(step(other, 'charge').id);
      await release('never-held');
      expect(await acquire(call('call-3', h.t + 60_000))).toBe(true);
    });

    it("does not count a run's own task slot against its steps", async (ctx) => {
      if (h.store.acquireSlot === undefined) return ctx.skip();
      const run = await h.running({ concurrency: { key: 'deploy', limit: 1 } });
      // Its task holds the key's only slot; its step of the same key still runs, and others find it full.
      expect(await acquire(step(run, 'apply', 'deploy', 1))).toBe(true);
      expect(await acquire(call('call', h.t + 60_000, 'deploy', 1))).toBe(false);
    });

    it("frees a call's slot at its end time, and a step's when its run's lease lapses", async (ctx) => {
      if (h.store.acquireSlot === undefined || h.store.freeSlots === undefined) return ctx.skip();
      const limit = { key: 'deploy', limit: 1 };
      expect(await acquire(call('dead-call', h.t + 5_000, 'deploy', 1))).toBe(true);
      const waiting = await create({ concurrency: limit });
      expect(await h.store.claim('w1', LEASE, h.t)).toBeUndefined();
      // Its process died: nothing releases it, but past its end the sweep counts it free and wakes the task.
      h.t += 5_001;
      expect(await h.store.freeSlots(h.t)).toBe(1);
      const run = await h.claim();
      expect(run.id).toBe(waiting);
      expect(await h.store.finish(run.id, run.token, completed, h.t)).toBe(true);
      // A step of a run that crashes: its slot is held until the run's lease lapses.
      const crashing = await h.running();
      expect(await acquire(step(crashing, 'apply', 'deploy', 1))).toBe(true);
      expect(await acquire(call('call', h.t + 60_000, 'deploy', 1))).toBe(false);
      h.t += LEASE + 1;
      expect(await acquire(call('call', h.t + 60_000, 'deploy', 1))).toBe(true);
    });

    it('refuses a holder with an invalid key, limit or id', async (ctx) => {
      if (h.store.acquireSlot === undefined) return ctx.skip();
      await expect(acquire(call('bad', h.t + 1, 'bad\u0000key'))).rejects.toThrow(/key must be/);
      await expect(acquire(call('bad', h.t + 1, 'payments', 0))).rejects.toThrow(/limit must be/);
      await expect(acquire(call('x'.repeat(201), h.t + 1))).rejects.toThrow(/id must be/);
      await expect(acquire({ id: 'no-end', slot: { key: 'k', limit: 1 } })).rejects.toThrow(/until/);
    });

    it('never lets runs and holders of one key pass its limit under concurrent claimers and holders', async (ctx) => {
      if (h.store.acquireSlot === undefined || h.store.freeSlots === undefined) return ctx.skip();
      const stores: ContractTaskStore[] = [h.store];
      if (h.openPeer !== undefined) stores.push(await h.openPeer());
      try {
        await limitHoldsWithHolders(stores);
      } finally {
        for (const s of stores.slice(1)) await s.close();
      }
    });
  });
}

/**
 * Three workers claim and run tasks of key K (limit 2) while three callers take slots of K as holders, on the stores
 * alternately; the history they record shows at most 2 of them at any moment, and both kinds got slots.
 */
async function limitHoldsWithHolders(stores: ContractTaskStore[]): Promise<void> {
  const first = stores[0] as ContractTaskStore;
  const now = () => Date.now();
  const K = { key: 'K', limit: 2 };
  for (let i = 0; i < 12; i++) await first.create(newTask({ createdAt: now(), ttlMs: null, concurrency: K }));
  const history: [number, number][] = [];
  let runs = 0;
  let held = 0;
  const deadline = performance.now() + 30_000;
  const hold = () => new Promise((r) => setTimeout(r, 15));
  const worker = async (n: number): Promise<void> => {
    const store = stores[n % stores.length] as ContractTaskStore;
    while (runs < 12 && performance.now() < deadline) {
      const run = await store.claim(`w${n}`, 60_000, now());
      if (run === undefined) {
        await store.freeSlots?.(now());
        await new Promise((r) => setTimeout(r, 3));
        continue;
      }
      const start = performance.now();
      await hold();
      history.push([start, performance.now()]);
      expect(await store.finish(run.id, run.token, completed, now())).toBe(true);
      runs++;
    }
  };
  const caller = async (n: number): Promise<void> => {
    const store = stores[n % stores.length] as ContractTaskStore;
    for (let i = 0; i < 8 && performance.now() < deadline;) {
      const id = `caller-${n}-${i}`;
      if (!(await must(store.acquireSlot).call(store, { id, slot: K, until: now() + 60_000 }, now()))) {
        await new Promise((r) => setTimeout(r, 2));
        continue;
      }
      const start = performance.now();
      await hold();
      history.push([start, performance.now()]);
      await must(store.releaseSlot).call(store, id, now());
      held++;
      i++;
    }
  };
  await Promise.all([0, 1, 2].flatMap((n) => [worker(n), caller(n)]));
  expect([runs, held]).toEqual([12, 24]);
  const most = mostAtOnce(history);
  expect(most).toBeLessThanOrEqual(2);
  expect(most).toBe(2);
}

/** After an upgrade (migration 27): a call's slot counts against tasks of its key, and its release wakes them. */
export async function expectHolderSlotsAfterUpgrade(store: TaskStore, now: number): Promise<void> {
  const key = { key: 'upgraded-holders', limit: 1 };
  expect(await must(store.acquireSlot).call(store, { id: 'call', slot: key, until: now + 60_000 }, now)).toBe(
    true,
  );
  const task = await store.create(newTask({ createdAt: now, concurrency: key }));
  for (let c = await store.claim('w', LEASE, now); c !== undefined; c = await store.claim('w', LEASE, now))
    expect(c.id).not.toBe(task.id);
  await must(store.releaseSlot).call(store, 'call', now);
  let run: ClaimedTask | undefined;
  for (let i = 0; i < 20 && run?.id !== task.id; i++) run = await store.claim('w', LEASE, now);
  expect(run?.id).toBe(task.id);
}
