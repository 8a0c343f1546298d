// The PostgreSQL store's account of its creation batches (TaskStore.creationBatches), which /metrics serves.
import { describe, expect, it } from 'vitest';
import { newTask } from '../task-store.contract.js';
import { withPostgres } from '../../../test/support/postgres.js';
import { usePostgresStores } from '../../../test/support/postgres-stores.js';

await withPostgres('the PostgreSQL creation batch tests', () => {
  const { open, freshSchema } = usePostgresStores('dmcp_batches');

  describe('PostgreSQL creation batches', () => {
    it('counts each batch once, with the creations it took and the time it took', async () => {
      const store = open({ schema: freshSchema() });
      expect(store.creationBatches?.()).toEqual({ batches: 0, tasks: 0, seconds: 0 });
      // 120 creations queued in one turn leave as one batch; one more later is a batch of its own.
      await Promise.all(Array.from({ length: 120 }, () => store.create(newTask())));
      const first = store.creationBatches!();
      expect(first).toMatchObject({ batches: 1, tasks: 120 });
      expect(first.seconds).toBeGreaterThan(0);
      await store.create(newTask());
      const second = store.creationBatches!();
      expect(second).toMatchObject({ batches: 2, tasks: 121 });
      expect(second.seconds).toBeGreaterThan(first.seconds);
    });

    it('counts an insert that failed, and each insert of a failed batch retried a task at a time', async () => {
      const store = open({ schema: freshSchema() });
      const task = newTask();
      await store.create(task);
      // The same id again: the insert fails on its primary key.
      await expect(store.create({ ...task })).rejects.toThrow();
      expect(store.creationBatches!()).toMatchObject({ batches: 2, tasks: 2 });
      // In one batch with two others: the batch fails, then each of its three is inserted alone.
      const results = await Promise.allSettled(
        [newTask(), { ...task }, newTask()].map((t) => store.create(t)),
      );
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      const counted = store.creationBatches!();
      expect(counted).toMatchObject({ batches: 6, tasks: 8 });
      // A copy: changing it changes nothing the store keeps.
      counted.batches = 99;
      expect(store.creationBatches!().batches).toBe(6);
    });
  });
});
