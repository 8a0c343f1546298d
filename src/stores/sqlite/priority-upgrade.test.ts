// A SQLite file of the release before priorities (migration 23): it opens, its tasks resume, and priorities order
// the tasks created after.
import Database from 'better-sqlite3';
import { describe, it } from 'vitest';
import { sqliteFiles } from '../../../test/support/sqlite-files.js';
import {
  expectPrioritiesAfterUpgrade,
  expectUpgradedTasksResume,
  seedUpgradeTasks,
} from '../task-store.contract.js';

const T0 = 1_700_000_000_000;

const { freshPath, open } = sqliteFiles();

describe('SQLite files of the release before priorities', () => {
  it('open, their tasks resume, and priorities order the tasks created after', async () => {
    const path = freshPath();
    const before = open(path);
    const seeded = await seedUpgradeTasks(before, T0);
    await before.close();
    // Take the file back to the schema of that release (before migration 23).
    const raw = new Database(path);
    raw.exec(`
      DROP INDEX tasks_owner_priority; ALTER TABLE tasks DROP COLUMN priority;
      DELETE FROM schema_migrations WHERE version = 23`);
    raw.close();

    const after = open(path);
    await expectUpgradedTasksResume(after, seeded, T0);
    await expectPrioritiesAfterUpgrade(after, T0 + 10_000);
  });
});
