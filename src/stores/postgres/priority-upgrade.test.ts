// A PostgreSQL schema of the release before priorities (migration 23): it migrates, its tasks resume, and priorities
// order the tasks created after.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import {
  expectPrioritiesAfterUpgrade,
  expectUpgradedTasksResume,
  seedUpgradeTasks,
} from '../task-store.contract.js';
import { migrate } from './migrations.js';
import { withPostgres } from '../../../test/support/postgres.js';
import { usePostgresStores } from '../../../test/support/postgres-stores.js';

const T0 = 1_700_000_000_000;

await withPostgres('the PostgreSQL priority upgrade test', () => {
  const { admin, open, freshSchema } = usePostgresStores('dmcp_prio');

  describe('PostgreSQL schemas of the release before priorities', () => {
    it('migrate, their tasks resume, and priorities order the tasks created after', async () => {
      const schema = freshSchema();
      const s = pg.escapeIdentifier(schema);
      const before = open({ schema });
      const seeded = await seedUpgradeTasks(before, T0);
      // Take the schema back to that release (before migration 23).
      await admin.query(`
        DROP INDEX ${s}.tasks_owner_priority; ALTER TABLE ${s}.tasks DROP COLUMN priority;
        DELETE FROM ${s}.schema_migrations WHERE version = 23`);

      expect(await migrate(admin, schema)).toEqual([23]);
      const after = open({ schema });
      await expectUpgradedTasksResume(after, seeded, T0);
      await expectPrioritiesAfterUpgrade(after, T0 + 10_000);
    });
  });
});
