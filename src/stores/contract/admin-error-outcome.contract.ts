// The TaskAdmin contract: failed tasks found by the word their error gives as `data.outcome` (the gateway's
// "outcome unknown"), sealed errors included; and a step's value read for a view derived from it, within the scope.
import { describe, expect, it } from 'vitest';
import { AdminQueryError } from '../../tasks/admin.js';
import type { RunOutcome } from '../../tasks/task.js';
import { ACME, adminOf, ALL, listed, seed } from './admin-fixture.contract.js';
import { must, newTask, OTHER_TENANT, T0, type ContractStore } from './harness.contract.js';

const failedWith = (data: unknown): RunOutcome => ({
  kind: 'failed',
  error: { code: -32603, message: 'outcome unknown: the upstream may have done this', data },
  statusMessage: 'Failed.',
});

export function adminErrorOutcomeContract(h: ContractStore): void {
  describe('operators: error outcomes', () => {
    it('finds failed tasks by their error data’s outcome word, sealed or not, within the scope', async () => {
      const ids: Record<string, string> = {};
      ids.unknown = await seed(h, { createdAt: T0 + 1 }, failedWith({ outcome: 'unknown', tool: 'pay' }));
      ids.sealed = await seed(h, { createdAt: T0 + 2, sensitive: true }, failedWith({ outcome: 'unknown' }));
      ids.other = await seed(
        h,
        { createdAt: T0 + 3, owner: OTHER_TENANT },
        failedWith({ outcome: 'unknown' }),
      );
      ids.notSent = await seed(h, { createdAt: T0 + 4 }, failedWith({ outcome: 'not_sent' }));
      // Not a word (free text, another type, no data): nothing is kept, nothing matches.
      ids.text = await seed(h, { createdAt: T0 + 5 }, failedWith({ outcome: 'Unknown outcome!' }));
      ids.number = await seed(h, { createdAt: T0 + 6 }, failedWith({ outcome: 7 }));
      ids.none = await seed(h, { createdAt: T0 + 7 }, failedWith(undefined));
      ids.completed = await seed(h, { createdAt: T0 + 8 }, { kind: 'completed', result: { content: [] } });

      expect(await listed(h, ids, ALL, { errorOutcome: 'unknown' })).toEqual(['other', 'sealed', 'unknown']);
      expect(await listed(h, ids, ACME, { errorOutcome: 'unknown' })).toEqual(['sealed', 'unknown']);
      expect(await listed(h, ids, ALL, { errorOutcome: 'not_sent' })).toEqual(['notSent']);
      // With the other filters, and paged.
      expect(
        await listed(h, ids, ALL, { errorOutcome: 'unknown', tenant: 'acme', status: ['failed'] }),
      ).toEqual(['sealed', 'unknown']);
      const first = await adminOf(h).list(ALL, { limit: 2, errorOutcome: 'unknown' }, h.t);
      expect(first.items.map((t) => t.id)).toEqual([ids.other, ids.sealed]);
      // A row shows the word, never the rest of the error's data.
      expect(first.items[1]?.error).toEqual({
        code: -32603,
        message: 'outcome unknown: the upstream may have done this',
        outcome: 'unknown',
      });
      const [plain] = (
        await adminOf(h).list(ALL, { limit: 1, errorText: 'outcome unknown', order: 'asc' }, h.t)
      ).items;
      expect(plain?.error).toEqual({ code: -32603, message: expect.any(String), outcome: 'unknown' });
      const rest = await adminOf(h).list(ALL, { limit: 2, errorOutcome: 'unknown', cursor: first.next }, h.t);
      expect(rest.items.map((t) => t.id)).toEqual([ids.unknown]);
      for (const bad of ['', 'Unknown', 'a b', 'x'.repeat(33), "unknown' OR 1=1"])
        await expect(adminOf(h).list(ALL, { limit: 5, errorOutcome: bad }, h.t)).rejects.toThrow(
          AdminQueryError,
        );
    });

    it('reads a step’s value within the scope, sealed ones opened; absent steps and tasks are undefined', async () => {
      const admin = adminOf(h);
      if (admin.stepValue === undefined) return;
      const plain = await h.store.create(newTask({ createdAt: T0 + 1 }));
      const run = must(await h.store.claim('w1', 1_000, T0 + 2));
      await h.store.saveStep(
        run.id,
        run.token,
        'upstream',
        { resultType: 'task', task: { taskId: 'up-1' } },
        T0 + 3,
      );
      const sealed = await h.store.create(
        newTask({ createdAt: T0 + 4, owner: OTHER_TENANT, sensitive: true }),
      );
      const other = must(await h.store.claim('w1', 1_000, T0 + 5));
      expect(other.id).toBe(sealed.id);
      await h.store.saveStep(other.id, other.token, 'dispatched', { run: 'r', task: sealed.id }, T0 + 6);

      expect(await admin.stepValue(ALL, plain.id, 'upstream', h.t)).toEqual({
        resultType: 'task',
        task: { taskId: 'up-1' },
      });
      expect(await admin.stepValue(ALL, sealed.id, 'dispatched', h.t)).toEqual({ run: 'r', task: sealed.id });
      expect(await admin.stepValue(ACME, sealed.id, 'dispatched', h.t)).toBeUndefined();
      expect(await admin.stepValue(ALL, plain.id, 'dispatched', h.t)).toBeUndefined();
      expect(await admin.stepValue(ALL, 'no-such-task', 'upstream', h.t)).toBeUndefined();
    });
  });
}
