// A PostgreSQL schema of the release before concurrency limits (migration 19): it migrates, its tasks resume, and
// limits hold for the tasks created after.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import {
  expectLimitHeldAfterUpgrade,
  expectUpgradedTasksResume,
  seedUpgradeTasks,
} from '../task-store.contract.js';
import { migrate } from './migrations.js';
import { withPostgres } from '../../../test/support/postgres.js';
import { usePostgresStores } from '../../../test/support/postgres-stores.js';

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
      await expectLimitHeldAfterUpgrade(after, T0 + 10_000);
    });
  });
});
