// A SQLite file of the release before slots held until a task ends (migration 22): it opens, its tasks resume, and a
// task created after holds its slot while it sleeps.
import Database from 'better-sqlite3';
import { describe, it } from 'vitest';
import { sqliteFiles } from '../../../test/support/sqlite-files.js';
import { expectHoldAfterUpgrade } from '../contract/concurrency-hold.contract.js';
import { expectUpgradedTasksResume, seedUpgradeTasks } from '../task-store.contract.js';

const T0 = 1_700_000_000_000;

const { freshPath, open } = sqliteFiles();

describe('SQLite files of the release before slots held until a task ends', () => {
  it('open, their tasks resume, and a task created after holds its slot while it sleeps', async () => {
    const path = freshPath();
    const before = open(path);
    const seeded = await seedUpgradeTasks(before, T0);
    await before.close();
    const raw = new Database(path);
    raw.exec(
      `ALTER TABLE tasks DROP COLUMN concurrency_hold; DELETE FROM schema_migrations WHERE version = 22`,
    );
    raw.close();

    const after = open(path);
    await expectUpgradedTasksResume(after, seeded, T0);
    await expectHoldAfterUpgrade(after, T0 + 10_000);
  });
});
