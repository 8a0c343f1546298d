// The schema the SQLite migrations give a new file is the one recorded in test/fixtures/catalog/sqlite.txt: a change
// in how migrations are stored or read cannot change what they do unnoticed (a new migration updates the record).
import { describe, expect, it } from 'vitest';
import { openSqlite } from '../database.js';
import { sqliteCatalog } from '../../../../test/support/catalog.js';

describe('the SQLite migrations', () => {
  it('produce the recorded catalog', async () => {
    const db = openSqlite({ path: ':memory:' });
    try {
      await expect(sqliteCatalog(db)).toMatchFileSnapshot('../../../../test/fixtures/catalog/sqlite.txt');
    } finally {
      db.close();
    }
  });
});
