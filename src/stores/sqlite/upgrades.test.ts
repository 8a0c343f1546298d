// SQLite files written by earlier releases: they open with this code, and their tasks resume and read as before.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { sqliteFiles, TAKE_BACK_PAUSES } from '../../../test/support/sqlite-files.js';
import type { TaskOwner } from '../../tasks/task.js';
import {
  expectUpgradedInspection,
  expectUpgradedLineOrder,
  expectUpgradedErrorOutcomes,
  expectUpgradedOutcomes,
  expectUpgradedTasksResume,
  sealingSensitive,
  seedLineBeforeUpgrade,
  seedErrorOutcomeTasks,
  seedOutcomeTasks,
  seedUpgradeTasks,
} from '../task-store.contract.js';
import { createSqliteTaskStore } from './task-store.js';

const ALICE: TaskOwner = { tenant: 'acme', principal: 'alice' };
const T0 = 1_700_000_000_000;

const { freshPath, open, opened } = sqliteFiles();

describe('SQLite files of earlier releases', () => {
  it('opens a file of the release before waits and idempotency keys, and its tasks resume as before', async () => {
    const path = freshPath();
    const before = open(path);
    const seeded = await seedUpgradeTasks(before, T0);
    await before.close();
    // Take the file back to the schema of that release (before migration 8); the lease of `running` lapses.
    const raw = new Database(path);
    raw.exec(`
      DROP INDEX tasks_wake; DROP INDEX tasks_idempotency; DROP INDEX tasks_live_expiry; DROP TABLE task_step_attempts;
      ALTER TABLE tasks DROP COLUMN wake_at; ALTER TABLE tasks DROP COLUMN idempotency_key;
      ALTER TABLE tasks DROP COLUMN failure; DELETE FROM schema_migrations WHERE version = 8`);
    raw.close();

    const after = open(path);
    await expectUpgradedTasksResume(after, seeded, T0);
    expect(await after.findByIdempotencyKey(ALICE, 'echo', 'k', {}, T0)).toBeUndefined();
  });

  it('opens a file of the release before status history and step timings; its tasks resume and read', async () => {
    const path = freshPath();
    const before = open(path);
    const seeded = await seedUpgradeTasks(before, T0);
    await before.close();
    // Take the file back to the schema of that release (before migration 14).
    const raw = new Database(path);
    raw.exec(`
      DROP TRIGGER task_history_changed; DROP TRIGGER task_history_deleted; DROP TABLE task_history;
      ALTER TABLE tasks DROP COLUMN created_message;
      ALTER TABLE task_steps DROP COLUMN started_at; ALTER TABLE task_steps DROP COLUMN saved_at;
      DELETE FROM schema_migrations WHERE version = 14`);
    raw.close();

    const after = open(path);
    await expectUpgradedTasksResume(after, seeded, T0);
    await expectUpgradedInspection(after, seeded, T0);
    // Purging a task takes its history with it.
    expect(await after.purge(T0 + 3_600_000, 0)).toBe(2);
    const left = new Database(path, { readonly: true });
    expect(left.prepare('SELECT count(*) AS n FROM task_history').get()).toEqual({ n: 0 });
    left.close();
  });

  it('opens a file of the release before outcomes: its finished tasks get theirs, tool errors marked', async () => {
    const path = freshPath();
    const sealing = sealingSensitive();
    const before = createSqliteTaskStore({ path, ...sealing });
    opened.push(before);
    const seeded = await seedOutcomeTasks(before, T0);
    await before.close();
    // Take the file back to the schema of that release (before migration 15).
    const raw = new Database(path);
    raw.exec(`
      DROP INDEX tasks_tool_errors; DROP INDEX tasks_retries;
      ALTER TABLE tasks DROP COLUMN tool_error; ALTER TABLE tasks DROP COLUMN retry_of;
      DELETE FROM schema_migrations WHERE version = 15`);
    raw.close();

    const after = createSqliteTaskStore({ path, ...sealing });
    opened.push(after);
    await expectUpgradedOutcomes(after, seeded, T0);
  });

  it('opens a file of the release before places in line kept their time; its line keeps its order', async () => {
    const path = freshPath();
    const before = open(path);
    const waiting = await seedLineBeforeUpgrade(before, T0);
    await before.close();
    // Take the file back to the schema of that release (before migration 17, and so before 20, 22, 23 and 24: the
    // indexes of 20, 23 and 24 name placed_at).
    const raw = new Database(path);
    raw.exec(`${TAKE_BACK_PAUSES}
      DROP INDEX tasks_owner_priority; ALTER TABLE tasks DROP COLUMN priority;
      DELETE FROM schema_migrations WHERE version = 23;
      ALTER TABLE tasks DROP COLUMN concurrency_hold; DELETE FROM schema_migrations WHERE version = 22;
      DROP TRIGGER concurrency_slots_task_deleted; DROP TABLE concurrency_slots;
      DROP INDEX tasks_parked; DROP INDEX tasks_parked_owner; ALTER TABLE tasks DROP COLUMN concurrency_key;
      ALTER TABLE tasks DROP COLUMN concurrency_limit; ALTER TABLE tasks DROP COLUMN parked_at;
      DELETE FROM schema_migrations WHERE version = 20;
      DROP INDEX tasks_fair; ALTER TABLE tasks DROP COLUMN placed_at;
      CREATE INDEX tasks_fair ON tasks (fair_at, created_at) WHERE runnable = 1;
      DELETE FROM schema_migrations WHERE version = 17`);
    raw.close();

    const after = open(path);
    // A process of that release on the same file still claims through the index it names.
    const older = new Database(path);
    const olderClaim = older.prepare(`
      SELECT id FROM tasks INDEXED BY tasks_fair
      WHERE runnable = 1 AND (lease_owner IS NULL OR lease_until < @now) AND (expires_at IS NULL OR expires_at > @now)
      ORDER BY fair_at, created_at LIMIT 1`);
    expect(olderClaim.get({ now: T0 })).toEqual({ id: waiting });
    older.close();
    await expectUpgradedLineOrder(after, waiting, T0);
  });

  it('opens a file of the release before error outcomes: its plain outcome-unknown failures are found', async () => {
    const path = freshPath();
    const sealing = sealingSensitive();
    const before = createSqliteTaskStore({ path, ...sealing });
    opened.push(before);
    const seeded = await seedErrorOutcomeTasks(before, T0);
    await before.close();
    // Take the file back to the schema of that release (before migration 19).
    const raw = new Database(path);
    raw.exec(`
      DROP INDEX tasks_error_outcomes; ALTER TABLE tasks DROP COLUMN error_outcome;
      DELETE FROM schema_migrations WHERE version = 19`);
    raw.close();

    const after = createSqliteTaskStore({ path, ...sealing });
    opened.push(after);
    await expectUpgradedErrorOutcomes(after, seeded, T0);
  });
});
