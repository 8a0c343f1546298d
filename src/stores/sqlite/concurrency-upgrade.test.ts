// A SQLite file of the release before concurrency limits (migration 20): it opens, its tasks resume, and limits hold
// for the tasks created after.
import Database from 'better-sqlite3';
import { describe, it } from 'vitest';
import { sqliteFiles } from '../../../test/support/sqlite-files.js';
import {
  expectLimitHeldAfterUpgrade,
  expectUpgradedTasksResume,
  seedUpgradeTasks,
} from '../task-store.contract.js';

const T0 = 1_700_000_000_000;

const { freshPath, open } = sqliteFiles();

describe('SQLite files of the release before concurrency limits', () => {
  it('open, their tasks resume, and tasks created after are held to their limit', async () => {
    const path = freshPath();
    const before = open(path);
    const seeded = await seedUpgradeTasks(before, T0);
    await before.close();
    // Take the file back to the schema of that release (before migration 20).
    const raw = new Database(path);
    raw.exec(`
      DROP TRIGGER concurrency_slots_task_deleted; DROP TABLE concurrency_slots;
      DROP INDEX tasks_parked; DROP INDEX tasks_parked_owner; ALTER TABLE tasks DROP COLUMN concurrency_key;
      ALTER TABLE tasks DROP COLUMN concurrency_limit; ALTER TABLE tasks DROP COLUMN parked_at;
      DELETE FROM schema_migrations WHERE version = 20`);
    raw.close();

    const after = open(path);
    await expectUpgradedTasksResume(after, seeded, T0);
    await expectLimitHeldAfterUpgrade(after, T0 + 10_000);
  });
});
