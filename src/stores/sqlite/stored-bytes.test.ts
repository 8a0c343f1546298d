// The SQLite store's count of the bytes each owner's kept tasks store (the byte quota; the contract tests the rest):
// a file of the release before it is counted by its migration as the triggers count.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { TaskOwner } from '../../tasks/task.js';
import { expectUpgradedTasksResume, seedUpgradeTasks } from '../task-store.contract.js';
import { createSqliteTaskStore } from './task-store.js';

const ALICE: TaskOwner = { tenant: 'acme', principal: 'alice' };
const T0 = 1_700_000_000_000;

const dirs: string[] = [];
const opened: ReturnType<typeof createSqliteTaskStore>[] = [];
const freshPath = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-sqlite-bytes-'));
  dirs.push(dir);
  return join(dir, 'tasks.db');
};
const open = (path: string) => {
  const store = createSqliteTaskStore({ path });
  opened.push(store);
  return store;
};

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the SQLite count of stored bytes', () => {
  it('opens a file of the release before byte counts: its tasks are counted, as the triggers count, and freed', async () => {
    const path = freshPath();
    const before = open(path);
    const seeded = await seedUpgradeTasks(before, T0);
    const counted = await before.storedBytes(ALICE);
    expect(counted).toBeGreaterThan(0);
    await before.close();
    // Take the file back to the schema of that release (before migration 18).
    const raw = new Database(path);
    raw.exec(`
      DROP TRIGGER owner_bytes_task_added; DROP TRIGGER owner_bytes_task_changed; DROP TRIGGER owner_bytes_task_deleted;
      DROP TRIGGER owner_bytes_step_added; DROP TRIGGER owner_bytes_step_changed;
      DROP TRIGGER owner_bytes_input_added; DROP TRIGGER owner_bytes_input_changed; DROP TABLE owner_bytes;
      DELETE FROM schema_migrations WHERE version = 18`);
    raw.close();

    const after = open(path);
    expect(await after.storedBytes(ALICE)).toBe(counted);
    await expectUpgradedTasksResume(after, seeded, T0);
    expect(await after.purge(T0 + 3_600_000, 0)).toBe(2);
    expect(await after.storedBytes(ALICE)).toBe(0);
  });
});
