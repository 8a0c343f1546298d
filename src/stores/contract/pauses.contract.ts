// The TaskStore contract: operators' pauses (TaskAdmin.pause, resume, pauses, flow). A claim that finds a task a
// pause holds back takes it out of the line (working, not claimable, its owner told why) and claims other tools'
// tasks past it; a run already going finishes; resuming makes the paused tasks runnable again in their order. Pauses
// carry a tenant or hold for all; an operator of some tenants sets, sees and lifts only theirs.
import { describe, expect, it } from 'vitest';
import type { AdminScope, TaskAdmin } from '../../tasks/admin.js';
import { PAUSED_MESSAGE } from '../../tasks/pauses.js';
import { ALICE, LEASE, must, OTHER_TENANT, type ContractStore, taskHelpers } from './harness.contract.js';

const ALL: AdminScope = { tenants: 'all' };
const ACME: AdminScope = { tenants: ['acme'] };
const GLOBEX: AdminScope = { tenants: ['globex'] };
const K = { key: 'payments', limit: 2 };
const completed = { kind: 'completed', result: { content: [], isError: false } } as const;

type PausingAdmin = Required<Pick<TaskAdmin, 'pause' | 'resume' | 'pauses' | 'flow'>>;

export function pausesContract(h: ContractStore): void {
  describe('operators pause and resume tools and keys', () => {
    /** The store's pauses (an optional capability: undefined when it has none). */
    const pausing = (): PausingAdmin | undefined => {
      const admin = h.store.admin;
      return admin?.pause === undefined ? undefined : (admin as TaskAdmin & PausingAdmin);
    };
    const { create, claimAll } = taskHelpers(h);

    it('holds back new runs of a paused tool while other tools run; a running task finishes; resume runs them', async (ctx) => {
      const admin = pausing();
      if (admin === undefined) return ctx.skip();
      const running = await h.running({ tool: 'slow' });
      const [a1, a2] = [await create({ tool: 'slow' }), await create({ tool: 'slow' })];
      const other = await create({ tool: 'echo' });
      expect(await admin.pause(ALL, { kind: 'tool', name: 'slow' }, h.t)).toEqual({
        ok: true,
        created: true,
      });
      expect(await admin.pause(ALL, { kind: 'tool', name: 'slow' }, h.t)).toEqual({
        ok: true,
        created: false,
      });

      expect((await claimAll()).map((c) => c.id)).toEqual([other]);
      expect(await h.snap(a1)).toMatchObject({ status: 'working', statusMessage: PAUSED_MESSAGE });
      expect(await h.store.countRunnable(h.t)).toBe(0);
      if (h.store.stats !== undefined)
        expect(await h.store.stats(h.t)).toMatchObject({ paused: 2, pausedByTool: { slow: 2 } });
      expect(await admin.pauses(ALL)).toEqual([
        { kind: 'tool', name: 'slow', pausedAt: h.t, pausedTasks: 2 },
      ]);

      // The run that was going when the pause came finishes as usual.
      expect(await h.store.finish(running.id, running.token, completed, h.t)).toBe(true);
      expect((await h.snap(running.id)).status).toBe('completed');

      h.t += 10;
      expect(await admin.resume(ALL, { kind: 'tool', name: 'slow' }, h.t)).toEqual({ ok: true, resumed: 2 });
      expect(await admin.resume(ALL, { kind: 'tool', name: 'slow' }, h.t)).toEqual({
        ok: false,
        reason: 'not_found',
      });
      expect(await admin.pauses(ALL)).toEqual([]);
      expect((await h.snap(a1)).statusMessage).not.toBe(PAUSED_MESSAGE);
      const resumed = await claimAll();
      expect(resumed.map((c) => c.id)).toEqual([a1, a2]);
      expect(resumed.every((c) => !c.takenOver)).toBe(true);
    });

    it('holds back the tasks of a paused key, whichever their tool, and tasks parked for its slots', async (ctx) => {
      const admin = pausing();
      if (admin === undefined || h.store.freeSlots === undefined) return ctx.skip();
      const [k1, k2, k3] = [
        await create({ tool: 'pay', concurrency: K }),
        await create({ tool: 'refund', concurrency: K }),
        await create({ tool: 'pay', concurrency: K }),
      ];
      const [r1, r2] = await claimAll();
      expect([r1?.id, r2?.id]).toEqual([k1, k2]);
      expect(await admin.flow(ALL, h.t, 10)).toEqual([
        { key: 'payments', limit: 2, slotsHeld: 2, parked: 1 },
      ]);
      expect(await admin.flow(GLOBEX, h.t, 10)).toEqual([]);

      expect(await admin.pause(ALL, { kind: 'key', name: 'payments' }, h.t)).toMatchObject({ ok: true });
      const k4 = await create({ tool: 'refund', concurrency: K });
      const free = await create({ tool: 'refund' });
      // Both runs end: their slots free, the parked task comes back to the line and is paused there.
      for (const r of [r1, r2])
        expect(await h.store.finish(must(r).id, must(r).token, completed, h.t)).toBe(true);
      await h.store.freeSlots(h.t);
      expect((await claimAll()).map((c) => c.id)).toEqual([free]);
      expect((await h.snap(k3)).statusMessage).toBe(PAUSED_MESSAGE);
      expect((await h.snap(k4)).statusMessage).toBe(PAUSED_MESSAGE);
      expect(await admin.pauses(ALL)).toMatchObject([{ kind: 'key', name: 'payments', pausedTasks: 2 }]);

      expect(await admin.resume(ALL, { kind: 'key', name: 'payments' }, h.t)).toEqual({
        ok: true,
        resumed: 2,
      });
      expect((await claimAll()).map((c) => c.id).sort()).toEqual([k3, k4].sort());
    });

    it('scopes pauses to tenants: a tenant’s pause holds only its tasks, and only its operators see and lift it', async (ctx) => {
      const admin = pausing();
      if (admin === undefined) return ctx.skip();
      const globex = { kind: 'tool', name: 'echo', tenant: 'globex' } as const;
      // An operator of some tenants pauses only for them, never for every tenant.
      expect(await admin.pause(ACME, globex, h.t)).toEqual({ ok: false, reason: 'forbidden' });
      expect(await admin.pause(ACME, { kind: 'tool', name: 'echo' }, h.t)).toEqual({
        ok: false,
        reason: 'forbidden',
      });
      expect(await admin.pauses(ALL)).toEqual([]);
      expect(await admin.pause(GLOBEX, globex, h.t)).toEqual({ ok: true, created: true });

      const mine = await create({ owner: ALICE });
      const theirs = await create({ owner: OTHER_TENANT });
      expect((await claimAll()).map((c) => c.id)).toEqual([mine]);
      expect((await h.snap(theirs, h.t, OTHER_TENANT)).statusMessage).toBe(PAUSED_MESSAGE);

      expect(await admin.pauses(ACME)).toEqual([]);
      expect(await admin.pauses(GLOBEX)).toEqual([{ ...globex, pausedAt: h.t, pausedTasks: 1 }]);
      expect(await admin.pauses(ALL)).toHaveLength(1);
      expect(await admin.resume(ACME, globex, h.t)).toEqual({ ok: false, reason: 'not_found' });
      expect(await admin.resume(GLOBEX, globex, h.t)).toEqual({ ok: true, resumed: 1 });
      expect((await claimAll()).map((c) => c.id)).toEqual([theirs]);
    });

    it('holds across processes: another instance on the same storage pauses and resumes the same tasks', async (ctx) => {
      const admin = pausing();
      if (admin === undefined || h.openPeer === undefined) return ctx.skip();
      expect(await admin.pause(ALL, { kind: 'tool', name: 'echo' }, h.t)).toMatchObject({ ok: true });
      const peer = await h.openPeer();
      try {
        const id = await create();
        const free = await create({ tool: 'other' });
        expect((await peer.claim('p1', LEASE, h.t))?.id).toBe(free);
        expect(await peer.claim('p1', LEASE, h.t)).toBeUndefined();
        expect(await peer.admin?.pauses?.(ALL)).toMatchObject([{ name: 'echo', pausedTasks: 1 }]);
        expect(await peer.admin?.resume?.(ALL, { kind: 'tool', name: 'echo' }, h.t)).toEqual({
          ok: true,
          resumed: 1,
        });
        expect((await h.store.claim('w1', LEASE, h.t))?.id).toBe(id);
      } finally {
        await peer.close();
      }
    });

    it('cancels a paused task at once, and a resume then finds nothing to wake', async (ctx) => {
      const admin = pausing();
      if (admin === undefined) return ctx.skip();
      expect(await admin.pause(ALL, { kind: 'tool', name: 'echo' }, h.t)).toMatchObject({ ok: true });
      const id = await create();
      expect(await h.store.claim('w1', LEASE, h.t)).toBeUndefined();
      expect(await h.store.requestCancel(id, ALICE, h.t)).toMatchObject({ ok: true });
      expect((await h.snap(id)).status).toBe('cancelled');
      expect(await admin.pauses(ALL)).toMatchObject([{ pausedTasks: 0 }]);
      expect(await admin.resume(ALL, { kind: 'tool', name: 'echo' }, h.t)).toEqual({ ok: true, resumed: 0 });
    });

    it('pauses every tenant’s tasks when it names none (an operator of every tenant)', async (ctx) => {
      const admin = pausing();
      if (admin === undefined) return ctx.skip();
      expect(await admin.pause(ALL, { kind: 'tool', name: 'echo' }, h.t)).toMatchObject({ ok: true });
      const [mine, theirs] = [await create({ owner: ALICE }), await create({ owner: OTHER_TENANT })];
      const other = await create({ tool: 'other' });
      expect((await claimAll()).map((c) => c.id)).toEqual([other]);
      // An operator of one tenant does not see (or lift) a pause of every tenant.
      expect(await admin.pauses(ACME)).toEqual([]);
      expect(await admin.resume(ACME, { kind: 'tool', name: 'echo' }, h.t)).toMatchObject({ ok: false });
      expect(await admin.resume(ALL, { kind: 'tool', name: 'echo' }, h.t)).toEqual({ ok: true, resumed: 2 });
      expect((await claimAll()).map((c) => c.id).sort()).toEqual([mine, theirs].sort());
    });
  });
}
