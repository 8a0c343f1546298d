// The SQL a created-and-run task costs on SQLite: statements and transactions of its creation, claim and ending,
// counted through the driver's statement log, so that a statement added to these paths fails here first.
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { sqliteFiles } from '../../../test/support/sqlite-files.js';
import { LEASE, newTask, T0 } from '../contract/harness.contract.js';
import type { ClaimedTask, NewTask } from '../../tasks/task.js';
import { openSqlite, type SqliteDatabase } from './database.js';
import { createSqliteTaskStore } from './task-store.js';

const { freshPath, opened } = sqliteFiles('durable-mcp-statements-');
const dbs: SqliteDatabase[] = [];

afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
});

/** A store on a connection that logs every statement it runs (the schema migrated beforehand). */
function countingStore() {
  const path = freshPath();
  openSqlite({ path }).close();
  let log: string[] = [];
  const db = new Database(path, { verbose: (sql) => log.push(String(sql).trim()) });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  dbs.push(db);
  const store = createSqliteTaskStore({ path, db, crossProcessPollMs: 60_000 });
  opened.push(store);
  /** The statements `fn` ran (PRAGMAs left out: they set up lease transactions and do not touch the file). */
  const during = async (fn: () => Promise<unknown>): Promise<string[]> => {
    log = [];
    await fn();
    return log.filter((sql) => !sql.startsWith('PRAGMA'));
  };
  /** Every statement `fn` ran, PRAGMAs included. */
  const all = async (fn: () => Promise<unknown>): Promise<string[]> => {
    log = [];
    await fn();
    return log;
  };
  /** Claims up to `max` tasks at T0 + 100 (the SQLite store always claims in batches). */
  const claim = (max: number): Promise<ClaimedTask[]> => {
    if (store.claimBatch === undefined) throw new Error('the SQLite store claims in batches');
    return store.claimBatch('worker', LEASE, T0 + 100, max);
  };
  return { store, db, during, all, claim };
}

const count = (statements: string[], prefix: string): number =>
  statements.filter((sql) => sql.startsWith(prefix)).length;

const N = 10;

describe('statements per created and run task (SQLite)', () => {
  it('creates a batch in one transaction: one insert per task and one notice for other processes', async () => {
    const { store, during } = countingStore();
    const tasks: NewTask[] = Array.from({ length: N }, (_, i) => newTask({ createdAt: T0 + i }));
    const sql = await during(() => Promise.all(tasks.map((task) => store.create(task))));
    expect(count(sql, 'BEGIN')).toBe(1);
    expect(count(sql, 'COMMIT')).toBe(1);
    expect(count(sql, 'INSERT INTO tasks')).toBe(N);
    expect(count(sql, 'INSERT INTO task_events')).toBe(1);
    expect(sql).toHaveLength(N + 3);
  });

  it('claims a batch in one transaction, reading the pauses once, and ends it in one more', async () => {
    const { store, during, claim: claimUpTo } = countingStore();
    const tasks = Array.from({ length: N }, (_, i) => newTask({ createdAt: T0 + i }));
    await Promise.all(tasks.map((task) => store.create(task)));

    let claimed: ClaimedTask[] = [];
    const claim = await during(async () => {
      claimed = await claimUpTo(N);
    });
    expect(claimed).toHaveLength(N);
    expect(count(claim, 'BEGIN')).toBe(1);
    expect(count(claim, 'SELECT count(*) FROM task_pauses')).toBe(1);
    // Per task: the head of the line, its owner's best, the lease, its steps, inputs and step attempts; once: the
    // begin, the woken waits, the pauses and the commit.
    expect(claim).toHaveLength(6 * N + 4);

    const end = await during(() =>
      Promise.all(
        claimed.map((task) =>
          store.finish(task.id, task.token, { kind: 'completed', result: { ok: true } }, T0 + 200),
        ),
      ),
    );
    expect(count(end, 'BEGIN')).toBe(1);
    // A task with neither a concurrency key nor a parent: its ending and its change, nothing else.
    expect(count(end, 'DELETE FROM concurrency_slots')).toBe(0);
    expect(end).toHaveLength(2 * N + 2);
  });

  it('frees the slot of a task with a concurrency key and tells the parent of a child', async () => {
    const { store, during, claim } = countingStore();
    const parent = newTask();
    await store.create(parent);
    const child = newTask({
      createdAt: T0 + 1,
      parent: { id: parent.id },
      concurrency: { key: 'k', limit: 1 },
    });
    await store.create(child);
    const [run] = await claim(1);
    expect(run?.id).toBe(parent.id);
    const [childRun] = await claim(1);
    expect(childRun?.id).toBe(child.id);
    const end = await during(() =>
      store.finish(child.id, childRun?.token ?? 0, { kind: 'completed', result: {} }, T0 + 200),
    );
    expect(count(end, 'DELETE FROM concurrency_slots AS c WHERE c.task_id')).toBe(1);
    expect(end.some((sql) => sql.includes('child_ended = 1'))).toBe(true);
  });

  it('commits a creation at NORMAL, to be synced off the event loop, and sets the connection back to FULL', async () => {
    const { store, db, all } = countingStore();
    const sql = await all(() => store.create(newTask()));
    expect(sql[0]).toBe('PRAGMA synchronous = NORMAL');
    expect(sql.at(-2)).toBe('COMMIT');
    expect(sql.at(-1)).toBe('PRAGMA synchronous = FULL');
    // 2: FULL.
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
  });

  it('commits a claim without the fsync and sets the connection back to FULL for every other write', async () => {
    const { store, db, claim, all } = countingStore();
    const synchronous = (): unknown => db.pragma('synchronous', { simple: true });
    await store.create(newTask());
    const sql = await all(() => claim(1));
    expect(sql[0]).toBe('PRAGMA synchronous = NORMAL');
    expect(sql.at(-2)).toBe('COMMIT');
    expect(sql.at(-1)).toBe('PRAGMA synchronous = FULL');
    // 2: FULL.
    expect(synchronous()).toBe(2);
  });
});
