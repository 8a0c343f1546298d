// The TaskStore contract: rate limits per key (NewTask.rateLimit). A key's first runs start one every
// periodMs / limit; a claim that meets a first run over its key's rate reserves the task's start (a backlog gets
// starts spaced by the interval, not a herd at each period) and the task waits for it, working, not claimable, its
// owner told why; when it comes due it starts without another count. Resumes, retries and takeovers are not counted.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { TaskStore } from '../../tasks/store.js';
import { rateWaitMessage, type ClaimedTask } from '../../tasks/task.js';
import { ALICE, LEASE, must, newTask, T0, type ContractStore, taskHelpers } from './harness.contract.js';

const completed = { kind: 'completed', result: { content: [], isError: false } } as const;

/** Whether the store keeps rate limits (its stats count the tasks waiting for them). */
const keepsRates = async (store: TaskStore, now: number): Promise<boolean> =>
  (await store.stats?.(now))?.rateWaitsByTool !== undefined;

/** A key no other test (or earlier run on the same database) used. */
const freshKey = (name: string): string => `${name}-${randomUUID()}`;

export function rateLimitContract(h: ContractStore): void {
  describe('rate limits per key', () => {
    const { create, claimAll } = taskHelpers(h);
    /** Claims and completes every task it can: the ids started. */
    const startAll = async (): Promise<string[]> => {
      const runs = await claimAll();
      for (const r of runs) expect(await h.store.finish(r.id, r.token, completed, h.t)).toBe(true);
      return runs.map((r) => r.id);
    };
    const sleep = (run: ClaimedTask, until: number) =>
      h.store.finish(run.id, run.token, { kind: 'waiting', until, statusMessage: 'Sleeping.' }, h.t);

    it('spaces the first runs of a key by periodMs / limit: a backlog is reserved its starts, not a herd', async (ctx) => {
      if (!(await keepsRates(h.store, h.t))) return ctx.skip();
      const key = freshKey('payments');
      const rateLimit = { key, limit: 2, periodMs: 1_000 };
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(await create({ rateLimit }));
      const free = await create();
      // The first starts now; the claims reserve the others' starts, one every 500 ms, and take the free task.
      expect(await startAll()).toEqual([ids[0], free]);
      for (const id of ids.slice(1))
        expect(await h.snap(id)).toMatchObject({ status: 'working', statusMessage: rateWaitMessage(key) });
      expect(await h.store.countRunnable(h.t)).toBe(0);
      expect(await h.store.stats?.(h.t)).toMatchObject({ rateWaitsByTool: { echo: 4 } });
      expect(await h.store.nextWakeAt?.(h.t)).toBe(h.t + 500);
      // Each starts when its time comes, not a millisecond before, one at a time; subscribers hear that it no longer
      // waits for the rate limit.
      const heard: string[] = [];
      const unsubscribe = h.store.changes?.subscribe((c) => heard.push(c.taskId));
      const starts: number[] = [];
      const t0 = h.t;
      for (const at of [499, 500, 999, 1_000, 1_500, 2_000]) {
        h.t = t0 + at;
        for (const run of await claimAll()) {
          starts.push(at);
          expect(run.id).toBe(ids[starts.length]);
          if (unsubscribe !== undefined) expect(heard).toContain(run.id);
          expect((await h.snap(run.id)).statusMessage).toBe('Queued.');
          expect(await h.store.finish(run.id, run.token, completed, h.t)).toBe(true);
        }
      }
      unsubscribe?.();
      expect(starts).toEqual([500, 1_000, 1_500, 2_000]);
      expect(await h.store.stats?.(h.t)).toMatchObject({ rateWaitsByTool: {} });
    });

    it('counts first runs only: a resume after a sleep and a takeover start at once, a reserved start once', async (ctx) => {
      if (!(await keepsRates(h.store, h.t))) return ctx.skip();
      const key = freshKey('crm');
      const rateLimit = { key, limit: 1, periodMs: 10_000 };
      const a = await create({ rateLimit });
      const b = await create({ rateLimit });
      const first = await claimAll();
      expect(first.map((c) => c.id)).toEqual([a]);
      const run = first[0];
      // a sleeps 100 ms: it runs again then, though the key's next start is 10 s away (b's).
      expect(await sleep(must(run), h.t + 100)).toBe(true);
      h.t += 100;
      const resumed = await claimAll('dead');
      expect(resumed.map((c) => c.id)).toEqual([a]);
      // Its process dies: the run is taken over as soon as its lease lapses.
      h.t += LEASE + 1;
      const taken = await claimAll('w2');
      expect(taken.map((c) => [c.id, c.takenOver])).toEqual([[a, true]]);
      expect(await h.store.finish(a, must(taken[0]).token, completed, h.t)).toBe(true);
      // b starts at its reserved time without another count: c, created then, gets the start after it.
      h.t = T0 + 10_000;
      const c = await create({ rateLimit });
      expect((await claimAll()).map((t) => t.id)).toEqual([b]);
      expect((await h.snap(c)).statusMessage).toBe(rateWaitMessage(key));
      expect(await h.store.nextWakeAt?.(h.t)).toBe(h.t + 10_000);
    });

    it('keeps keys apart, and lets a task waiting for its start be cancelled at once', async (ctx) => {
      if (!(await keepsRates(h.store, h.t))) return ctx.skip();
      const [k1, k2] = [freshKey('k1'), freshKey('k2')];
      const one = (key: string) => ({ key, limit: 1, periodMs: 60_000 });
      const a1 = await create({ rateLimit: one(k1) });
      const a2 = await create({ rateLimit: one(k1) });
      const b1 = await create({ rateLimit: one(k2) });
      expect(await startAll()).toEqual([a1, b1]);
      expect((await h.snap(a2)).statusMessage).toBe(rateWaitMessage(k1));
      expect(await h.store.requestCancel(a2, ALICE, h.t)).toMatchObject({ ok: true, cancelledNow: true });
      expect(await h.snap(a2)).toMatchObject({ status: 'cancelled' });
      h.t += 60_000;
      expect(await claimAll()).toEqual([]);
    });

    it('checks the rate before the concurrency slot: a reserved start parked for a slot is not counted again', async (ctx) => {
      if (!(await keepsRates(h.store, h.t)) || h.store.freeSlots === undefined) return ctx.skip();
      const key = freshKey('deploy');
      const both = { rateLimit: { key, limit: 1, periodMs: 1_000 }, concurrency: { key, limit: 1 } };
      const a = await create(both);
      const b = await create(both);
      const [run] = await claimAll();
      expect(run?.id).toBe(a);
      expect(await claimAll()).toEqual([]);
      expect((await h.snap(b)).statusMessage).toBe(rateWaitMessage(key));
      // b's start comes, but a still runs: b waits for the slot.
      h.t += 1_000;
      expect(await claimAll()).toEqual([]);
      expect((await h.snap(b)).statusMessage).toMatch(/free slot/);
      // a ends 500 ms later: b starts then, though a start counted now would wait until T0 + 2 s.
      h.t += 500;
      expect(await h.store.finish(a, must(run).token, completed, h.t)).toBe(true);
      expect((await claimAll()).map((t) => t.id)).toEqual([b]);
    });

    it('reserves starts in the order of priorities within an owner', async (ctx) => {
      if (!(await keepsRates(h.store, h.t))) return ctx.skip();
      const key = freshKey('sms');
      const rateLimit = { key, limit: 1, periodMs: 1_000 };
      const low = await create({ rateLimit });
      const high = await create({ rateLimit, priority: 10 });
      const mid = await create({ rateLimit, priority: 5 });
      const order: string[][] = [];
      for (let i = 0; i < 3; i++, h.t += 1_000) order.push(await startAll());
      expect(order).toEqual([[high], [mid], [low]]);
    });
  });
}

/** After an upgrade (migration 25): the first runs of a key created after are spaced by its rate. */
export async function expectRateAfterUpgrade(store: TaskStore, now: number): Promise<void> {
  const rateLimit = { key: freshKey('upgraded-rate'), limit: 1, periodMs: 1_000 };
  const first = await store.create(newTask({ createdAt: now, rateLimit }));
  const second = await store.create(newTask({ createdAt: now, rateLimit }));
  const claimed: string[] = [];
  for (let c = await store.claim('w', LEASE, now); c !== undefined; c = await store.claim('w', LEASE, now))
    claimed.push(c.id);
  expect(claimed).toContain(first.id);
  expect(claimed).not.toContain(second.id);
  expect(await store.nextWakeAt?.(now)).toBe(now + 1_000);
  const later: string[] = [];
  for (
    let c = await store.claim('w', LEASE, now + 1_000);
    c !== undefined;
    c = await store.claim('w', LEASE, now + 1_000)
  )
    later.push(c.id);
  expect(later).toContain(second.id);
}
