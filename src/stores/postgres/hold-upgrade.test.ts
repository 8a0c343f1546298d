// A PostgreSQL schema of the release before slots held until a task ends (migration 22): it migrates, its tasks
// resume, and a task created after holds its slot while it sleeps.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { expectHoldAfterUpgrade } from '../contract/concurrency-hold.contract.js';
import { expectUpgradedTasksResume, seedUpgradeTasks } from '../task-store.contract.js';
import { migrate } from './migrations.js';
import { withPostgres } from '../../../test/support/postgres.js';
import { usePostgresStores } from '../../../test/support/postgres-stores.js';

const T0 = 1_700_000_000_000;

await withPostgres('the PostgreSQL slot hold upgrade test', () => {
  const { admin, open, freshSchema } = usePostgresStores('dmcp_hold');

  describe('PostgreSQL schemas of the release before slots held until a task ends', () => {
    it('migrate, their tasks resume, and a task created after holds its slot while it sleeps', async () => {
      const schema = freshSchema();
      const s = pg.escapeIdentifier(schema);
      const before = open({ schema });
      const seeded = await seedUpgradeTasks(before, T0);
      await admin.query(`ALTER TABLE ${s}.tasks DROP COLUMN concurrency_hold;
        DELETE FROM ${s}.schema_migrations WHERE version = 22`);

      expect(await migrate(admin, schema)).toEqual([22]);
      const after = open({ schema });
      await expectUpgradedTasksResume(after, seeded, T0);
      await expectHoldAfterUpgrade(after, T0 + 10_000);
    });
  });
});
