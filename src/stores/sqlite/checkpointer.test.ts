// The WAL checkpointed by a thread of its own: the frames commits write are copied into the database file without
// the writing connection's automatic checkpoint, and a thread that cannot work hands checkpoints back to it.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sqliteFiles } from '../../../test/support/sqlite-files.js';
import { newTask } from '../task-store.contract.js';
import { BACKSTOP_AUTOCHECKPOINT, createCheckpointer, type CheckpointResult } from './checkpointer.js';
import { openSqlite } from './database.js';
import { createSqliteTaskStore } from './task-store.js';

const T0 = 1_700_000_000_000;
const { freshPath, opened } = sqliteFiles();

const waitFor = async (done: () => boolean, ms = 5_000): Promise<void> => {
  const until = Date.now() + ms;
  while (!done()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describe('SQLite WAL checkpoints off the event loop', () => {
  it('copies committed frames into the database file while the connection never checkpoints', async () => {
    const path = freshPath();
    const db = openSqlite({ path });
    db.pragma('wal_autocheckpoint = 0');
    db.exec('CREATE TABLE t (v TEXT)');
    const results: CheckpointResult[] = [];
    const failures: unknown[] = [];
    const checkpointer = createCheckpointer(
      path,
      (err) => failures.push(err),
      (r) => results.push(r),
    );
    try {
      const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
      for (let i = 0; i < 200; i++) insert.run('x'.repeat(1_000));
      checkpointer.committed();
      checkpointer.committed();
      await waitFor(() => results.length > 0);
      // One checkpoint for both commits, every frame of the WAL copied.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(results).toHaveLength(1);
      expect(results[0]?.busy).toBe(0);
      expect(results[0]?.log).toBeGreaterThan(0);
      expect(results[0]?.checkpointed).toBe(results[0]?.log);
      // The next writer starts the WAL over.
      insert.run('y');
      checkpointer.committed();
      await waitFor(() => results.length > 1);
      expect(results[1]?.log).toBeLessThan(results[0]?.log ?? 0);
      expect(failures).toEqual([]);
    } finally {
      await checkpointer.close();
      db.close();
    }
  });

  it('says it failed when the thread cannot open the file, and closes all the same', async () => {
    const failures: unknown[] = [];
    const checkpointer = createCheckpointer(join(freshPath(), 'missing', 'tasks.db'), (err) =>
      failures.push(err),
    );
    await waitFor(() => checkpointer.failed);
    expect(failures).toHaveLength(1);
    checkpointer.committed();
    await checkpointer.close();
  });

  it('leaves the store’s connection only a backstop threshold while open, and its own once closed', async () => {
    const path = freshPath();
    const db = openSqlite({ path });
    const own = db.pragma('wal_autocheckpoint', { simple: true });
    const store = createSqliteTaskStore({ path, db });
    opened.push(store);
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(BACKSTOP_AUTOCHECKPOINT);
    await store.create(newTask({ createdAt: T0 - 1 }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const before = statSync(path).size;
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.create(newTask({ createdAt: T0 + i }))));
    // The thread copied them into the database file (the connection's threshold is far off; no one else checkpoints).
    await waitFor(() => statSync(path).size > before);
    await store.close();
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(own);
    db.close();
  });
});
