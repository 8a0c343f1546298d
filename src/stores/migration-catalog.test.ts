// The schema the migrations produce, on both stores, is the one recorded in test/fixtures/catalog/ (dumped from a
// fresh store): a change in how migrations are stored or read cannot change what they do unnoticed.
import { describe, expect, it } from 'vitest';
import { openSqlite } from './sqlite/database.js';
import { migrate } from './postgres/migrations.js';
import { postgresCatalog, sqliteCatalog } from '../../test/support/catalog.js';
import { withPostgres } from '../../test/support/postgres.js';
import { usePostgresStores } from '../../test/support/postgres-stores.js';

describe('the SQLite migrations', () => {
  it('produce the recorded catalog', async () => {
    const db = openSqlite({ path: ':memory:' });
    try {
      await expect(sqliteCatalog(db)).toMatchFileSnapshot('../../test/fixtures/catalog/sqlite.txt');
    } finally {
      db.close();
    }
  });
});

await withPostgres('the PostgreSQL migration catalog test', () => {
  const { admin, freshSchema } = usePostgresStores('dmcp_catalog');

  describe('the PostgreSQL migrations', () => {
    it('produce the recorded catalog', async () => {
      const schema = freshSchema();
      await migrate(admin, schema);
      await expect(await postgresCatalog(admin, schema)).toMatchFileSnapshot(
        '../../test/fixtures/catalog/postgres.txt',
      );
    });
  });
});
