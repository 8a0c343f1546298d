// A PostgreSQL schema of the release before concurrency limits (migration 19): it migrates, its tasks resume, and
// limits hold for the tasks created after.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { slotWaitMessage, type TaskOwner } from '../../tasks/task.js';
import { expectUpgradedTasksResume, newTask, seedUpgradeTasks } from '../task-store.contract.js';
import { migrate } from './migrations.js';
import { withPostgres } from '../../../test/support/postgres.js';
import { usePostgresStores } from '../../../test/support/postgres-stores.js';

const ALICE: TaskOwner = { tenant: 'acme', principal: 'alice' };
const T0 = 1_700_000_000_000;

await withPostgres('the PostgreSQL concurrency upgrade test', () => {
  const { admin, open, freshSchema } = usePostgresStores('dmcp_slots');

  describe('PostgreSQL schemas of the release before concurrency limits', () => {
    it('migrate, their tasks resume, and tasks created after are held to their limit', async () => {
      const schema = freshSchema();
      const s = pg.escapeIdentifier(schema);
      const before = open({ schema });
      const seeded = await seedUpgradeTasks(before, T0);
      // Take the schema back to that release (before migration 19).
      await admin.query(`
        DROP TABLE ${s}.concurrency_slots; DROP INDEX ${s}.tasks_parked; DROP INDEX ${s}.tasks_parked_owner;
        ALTER TABLE ${s}.tasks DROP COLUMN concurrency_key, DROP COLUMN concurrency_limit, DROP COLUMN parked_at;
        DELETE FROM ${s}.schema_migrations WHERE version = 19`);

      expect(await migrate(admin, schema)).toEqual([19]);
      const after = open({ schema });
      await expectUpgradedTasksResume(after, seeded, T0);
      const t = T0 + 10_000;
      const one = { key: 'deploy', limit: 1 };
      const first = await after.create(newTask({ createdAt: t, concurrency: one }));
      const second = await after.create(newTask({ createdAt: t, concurrency: one }));
      // Whatever else is left in line (the resumed task whose lease lapsed) is claimed too; the second one is not.
      const claimed: string[] = [];
      for (let c = await after.claim('w', 1_000, t); c !== undefined; c = await after.claim('w', 1_000, t))
        claimed.push(c.id);
      expect(claimed).toContain(first.id);
      expect(claimed).not.toContain(second.id);
      expect(await after.get(second.id, ALICE, t)).toMatchObject({
        statusMessage: slotWaitMessage('deploy'),
      });
    });
  });
});
