// The operators' port on PostgreSQL: the shared TaskAdmin contract on a throwaway schema (a second instance plays
// another replica), and the plans of the searches an operator runs most.
import pg from 'pg';
import { beforeAll } from 'vitest';
import { runTaskAdminContract } from '../task-admin.contract.js';
import { migrate } from './migrations.js';
import { createPostgresTaskStore } from './task-store.js';
import { TEST_POSTGRES_URL as URL, withPostgres } from '../../../test/support/postgres.js';
import { usePostgresStores } from '../../../test/support/postgres-stores.js';

await withPostgres('the PostgreSQL operators’ port tests', defineSuites);

function defineSuites(): void {
  const { admin, schema: SCHEMA } = usePostgresStores('dmcp_admin');

  beforeAll(async () => {
    await migrate(admin, SCHEMA);
  });

  runTaskAdminContract({
    name: 'postgres',
    newStore: async () => {
      await admin.query(`TRUNCATE ${pg.escapeIdentifier(SCHEMA)}.tasks CASCADE`);
      return createPostgresTaskStore({ connectionString: URL, schema: SCHEMA, poolSize: 4 });
    },
    openPeer: () => createPostgresTaskStore({ connectionString: URL, schema: SCHEMA, poolSize: 4 }),
  });
}
