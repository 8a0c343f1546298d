// The schema the PostgreSQL migrations give a new schema is the one recorded in test/fixtures/catalog/postgres.txt: a
// change in how migrations are stored or read cannot change what they do unnoticed (a new migration updates the
// record).
import { describe, expect, it } from 'vitest';
import { migrate } from '../migrations.js';
import { postgresCatalog } from '../../../../test/support/catalog.js';
import { withPostgres } from '../../../../test/support/postgres.js';
import { usePostgresStores } from '../../../../test/support/postgres-stores.js';

await withPostgres('the PostgreSQL migration catalog test', () => {
  const { admin, freshSchema } = usePostgresStores('dmcp_catalog');

  describe('the PostgreSQL migrations', () => {
    it('produce the recorded catalog', async () => {
      const schema = freshSchema();
      await migrate(admin, schema);
      await expect(await postgresCatalog(admin, schema)).toMatchFileSnapshot(
        '../../../../test/fixtures/catalog/postgres.txt',
      );
    });
  });
});
