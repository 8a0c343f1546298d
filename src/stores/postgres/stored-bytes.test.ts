// The PostgreSQL store's count of the bytes each owner's kept tasks store (the byte quota; the contract tests the
// rest): exact, without a deadlock, while several pools create, write and purge, and when a task's write falls in a
// shard its batch did not count in; a schema of the release before it counted by its migration as the triggers count,
// and a count that drifted before migration 21 taken again by it.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { TaskOwner } from '../../tasks/task.js';
import { expectUpgradedTasksResume, newTask, seedUpgradeTasks } from '../task-store.contract.js';
import { migrate } from './migrations.js';
import { withPostgres } from '../../../test/support/postgres.js';
import { usePostgresStores } from '../../../test/support/postgres-stores.js';

const T0 = 1_700_000_000_000;
const ALICE: TaskOwner = { tenant: 'acme', principal: 'alice' };

await withPostgres('the PostgreSQL count of stored bytes', defineSuites);

function defineSuites(): void {
  const { admin, open, freshSchema } = usePostgresStores('dmcp_bytes');

  describe('the PostgreSQL count of stored bytes', () => {
    it('count the bytes of many owners exactly, without a deadlock, while two pools create, write and purge', async () => {
      const schema = freshSchema();
      const s = pg.escapeIdentifier(schema);
      const pools = [open({ schema, poolSize: 8 }), open({ schema, poolSize: 8 })];
      const owners = ['a', 'b', 'c', 'd', 'e'].map((principal) => ({ tenant: 'acme', principal }));
      const pick = <T>(list: readonly T[], i: number): T => list[i % list.length] as T;
      // Creations of every owner through both pools (batches of several owners each), half of them short-lived.
      const created = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          pick(pools, i).create(
            newTask({ owner: pick(owners, i), createdAt: T0, ttlMs: i % 2 === 0 ? 1_000 : 600_000 }),
          ),
        ),
      );
      expect(created).toHaveLength(60);
      const claimed = (
        await Promise.all(created.map((_, i) => pick(pools, i).claim(`w${i}`, 60_000, T0)))
      ).filter((t) => t !== undefined);
      // Steps written at once (two per task, in parallel), more creations, and both pools purging the short-lived.
      await Promise.all([
        ...claimed.flatMap((t, i) =>
          ['x', 'y'].map((name) =>
            pick(pools, i).saveStep(t.id, t.token, name, { data: 'z'.repeat(100 + i) }, T0 + 2_000),
          ),
        ),
        ...Array.from({ length: 30 }, (_, i) =>
          pick(pools, i).create(newTask({ owner: pick(owners, i + 1), createdAt: T0 + 2_000 })),
        ),
        pools[0]?.purge(T0 + 2_000, 0),
        pools[1]?.purge(T0 + 2_000, 0),
      ]);
      // The counts are what the tables hold (summed here as the migration does).
      const { rows } = await admin.query<{ principal: string; held: string; counted: string }>(`
        SELECT t.principal, sum(octet_length(t.args) + coalesce(octet_length(t.result), 0)
          + coalesce((SELECT sum(octet_length(value)) FROM ${s}.task_steps WHERE task_id = t.id), 0)) AS held,
          (SELECT sum(bytes) FROM ${s}.owner_bytes o WHERE o.tenant = t.tenant AND o.principal = t.principal) AS counted
        FROM ${s}.tasks t GROUP BY t.tenant, t.principal ORDER BY t.principal`);
      expect(rows).toHaveLength(owners.length);
      for (const row of rows) expect(row.counted).toBe(row.held);
    });

    it('count exactly when the tasks of one batch are counted in one shard and later written one by one', async () => {
      const schema = freshSchema();
      const s = pg.escapeIdentifier(schema);
      const store = open({ schema });
      // Created in one turn: one multi-row insert, whose bytes go to the shard of its first task only.
      const tasks = await Promise.all(
        Array.from({ length: 12 }, () =>
          store.create(newTask({ owner: ALICE, createdAt: T0, ttlMs: 1_000 })),
        ),
      );
      const { rows: shards } = await admin.query<{ n: number }>(
        `SELECT count(DISTINCT ${s}.owner_bytes_shard(id))::int AS n FROM ${s}.tasks`,
      );
      expect(shards[0]?.n).toBeGreaterThan(1);
      const held = async (): Promise<number> => {
        const { rows } = await admin.query<{ n: string | null }>(`
          SELECT sum(octet_length(t.args) + coalesce(octet_length(t.result), 0)
            + coalesce((SELECT sum(octet_length(value)) FROM ${s}.task_steps WHERE task_id = t.id), 0)) AS n
          FROM ${s}.tasks t`);
        return Number(rows[0]?.n ?? 0);
      };
      // Then written one by one: a result, or steps written again (changed) before it; some left as they are.
      for (let i = 0; i < 8; i++) {
        const claimed = await store.claim('w', 60_000, T0);
        if (claimed === undefined) throw new Error('a task was not claimed');
        if (i % 2 === 1) {
          await store.saveStep(claimed.id, claimed.token, 'x', { data: 'a' }, T0);
          await store.saveStep(claimed.id, claimed.token, 'x', { data: 'a longer value' }, T0);
        }
        const result = { content: [{ type: 'text', text: 'done' }] };
        expect(await store.finish(claimed.id, claimed.token, { kind: 'completed', result }, T0)).toBe(true);
      }
      expect(await store.storedBytes(ALICE)).toBe(await held());
      expect(await store.purge(T0 + 3_600_000, 0)).toBe(tasks.length);
      expect(await store.storedBytes(ALICE)).toBe(0);
    });

    it('migration 21 takes the count again: a count that drifted before it is exact after it', async () => {
      const schema = freshSchema();
      const s = pg.escapeIdentifier(schema);
      const store = open({ schema });
      await seedUpgradeTasks(store, T0);
      const counted = await store.storedBytes(ALICE);
      expect(counted).toBeGreaterThan(0);
      await admin.query(`
        UPDATE ${s}.owner_bytes SET bytes = bytes + 999;
        DELETE FROM ${s}.schema_migrations WHERE version = 21`);
      expect(await store.storedBytes(ALICE)).not.toBe(counted);
      expect(await migrate(admin, schema)).toEqual([21]);
      expect(await store.storedBytes(ALICE)).toBe(counted);
    });

    it('migrates a schema of the release before byte counts: its tasks are counted, as the triggers count', async () => {
      const schema = freshSchema();
      const s = pg.escapeIdentifier(schema);
      const before = open({ schema });
      const seeded = await seedUpgradeTasks(before, T0);
      const counted = await before.storedBytes(ALICE);
      expect(counted).toBeGreaterThan(0);
      // Take the schema back to that release (before migration 17).
      const functions = [
        'owner_bytes_tasks_added()',
        'owner_bytes_task_changed()',
        'owner_bytes_task_deleting()',
        'owner_bytes_tasks_deleted()',
        'owner_bytes_tasks_truncated()',
        'owner_bytes_step_added()',
        'owner_bytes_step_changed()',
        'owner_bytes_inputs_added()',
        'owner_bytes_input_changed()',
        'owner_bytes_shard(text)',
      ];
      await admin.query(`
        ${functions.map((f) => `DROP FUNCTION ${s}.${f} CASCADE;`).join('\n')}
        DROP TABLE ${s}.owner_bytes, ${s}.purged_bytes;
        DELETE FROM ${s}.schema_migrations WHERE version = 17`);

      expect(await migrate(admin, schema)).toEqual([17]);
      const after = open({ schema });
      expect(await after.storedBytes(ALICE)).toBe(counted);
      await expectUpgradedTasksResume(after, seeded, T0);
      expect(await after.purge(T0 + 3_600_000, 0)).toBe(2);
      expect(await after.storedBytes(ALICE)).toBe(0);
    });
  });
}
