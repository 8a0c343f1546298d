// A SQLite file of the release before concurrency limits (migration 20): it opens, its tasks resume, and limits hold
// for the tasks created after.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { sqliteFiles } from '../../../test/support/sqlite-files.js';
import { slotWaitMessage, type TaskOwner } from '../../tasks/task.js';
import { expectUpgradedTasksResume, newTask, seedUpgradeTasks } from '../task-store.contract.js';

const ALICE: TaskOwner = { tenant: 'acme', principal: 'alice' };
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
    const t = T0 + 10_000;
    const one = { key: 'deploy', limit: 1 };
    const first = await after.create(newTask({ createdAt: t, concurrency: one }));
    const second = await after.create(newTask({ createdAt: t, concurrency: one }));
    // Whatever else is left in line (the resumed task whose lease lapsed) is claimed too; the second one is not.
    const claimed: string[] = [];
    for (let c = await after.claim('w', 1_000, t); c !== undefined; c = await after.claim('w', 1_000, t))
      claimed.push(c.id);
    expect(claimed).toContain(first.id);
    expect(claimed).not.toContain(second.id);
    expect(await after.get(second.id, ALICE, t)).toMatchObject({ statusMessage: slotWaitMessage('deploy') });
  });
});
