// The TaskStore contract: claims within a process's scope. A process claims only tasks of the tools it serves whose
// recorded version its code replays (a task recorded without a version: any), and tasks of tools it does not serve
// once untouched for the drain; what its scope leaves out is counted by tool and version.
import { describe, expect, it } from 'vitest';
import type { ClaimScope } from '../../tasks/store.js';
import { LEASE, newTask, type ContractStore } from './harness.contract.js';

export function scopeContract(h: ContractStore): void {
  describe('claim scope', () => {
    const v1: ClaimScope = { tools: { report: ['1'], echo: [] } };
    const v2: ClaimScope = { tools: { report: ['2', '1.5'], echo: [] } };

    it('claims only tasks of the versions a scope replays, and tasks recorded without one anywhere', async () => {
      h.t += 1;
      const old = await h.store.create(newTask({ tool: 'report', toolVersion: '1', createdAt: h.t }));
      h.t += 1;
      const mid = await h.store.create(newTask({ tool: 'report', toolVersion: '1.5', createdAt: h.t }));
      h.t += 1;
      const current = await h.store.create(newTask({ tool: 'report', toolVersion: '2', createdAt: h.t }));
      h.t += 1;
      const plain = await h.store.create(newTask({ tool: 'report', createdAt: h.t }));
      const byV2 = await h.store.claimBatch?.('w2', LEASE, h.t, 10, v2);
      const claimedByV2 =
        byV2 ??
        [
          await h.store.claim('w2', LEASE, h.t, v2),
          await h.store.claim('w2', LEASE, h.t, v2),
          await h.store.claim('w2', LEASE, h.t, v2),
        ].filter((t) => t !== undefined);
      expect(claimedByV2.map((t) => t.id).sort()).toEqual([mid.id, current.id, plain.id].sort());
      expect(await h.store.claim('w2', LEASE, h.t, v2)).toBeUndefined();
      expect((await h.store.claim('w1', LEASE, h.t, v1))?.id).toBe(old.id);
      expect(await h.store.claim('w1', LEASE, h.t, v1)).toBeUndefined();
    });

    it('counts what a scope leaves out, by tool and version', async () => {
      for (const version of ['1', '1', '3'])
        await h.store.create(newTask({ tool: 'report', toolVersion: version, createdAt: h.t }));
      await h.store.create(newTask({ tool: 'report', toolVersion: '2', createdAt: h.t }));
      await h.store.create(newTask({ tool: 'elsewhere', toolVersion: '9', createdAt: h.t }));
      if (h.store.outOfScope === undefined) return;
      expect(await h.store.outOfScope(v2, h.t)).toEqual([
        { tool: 'report', version: '1', count: 2 },
        { tool: 'report', version: '3', count: 1 },
      ]);
    });

    it('leaves tasks of tools it does not serve to others until they are untouched for the drain', async () => {
      const gone = await h.store.create(newTask({ tool: 'retired', createdAt: h.t }));
      const scope = (drainMs: number): ClaimScope => ({ tools: v2.tools, orphanedBefore: h.t - drainMs });
      expect(await h.store.claim('w', LEASE, h.t, { tools: v2.tools })).toBeUndefined();
      h.t += 1_000;
      expect(await h.store.claim('w', LEASE, h.t, scope(5_000))).toBeUndefined();
      h.t += 5_000;
      expect((await h.store.claim('w', LEASE, h.t, scope(5_000)))?.id).toBe(gone.id);
    });

    it('claims anything without a scope, as before', async () => {
      const t = await h.store.create(newTask({ tool: 'retired', toolVersion: '7', createdAt: h.t }));
      expect((await h.store.claim('w', LEASE, h.t))?.id).toBe(t.id);
    });
  });
}
