// The SQLite store: the shared contract on a real file, plus what only a shared file can show.
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { sqliteFiles } from '../../../test/support/sqlite-files.js';
import type { TaskStore } from '../../tasks/store.js';
import type { TaskOwner, TaskSnapshot } from '../../tasks/task.js';
import { newTask, runTaskStoreContract } from '../task-store.contract.js';
import { openSqlite, type SqliteDatabase } from './database.js';
import { createSqliteTaskStore } from './task-store.js';
import { SWEEP_CHUNK } from './sql/sweeps.js';

const ALICE: TaskOwner = { tenant: 'acme', principal: 'alice' };
const T0 = 1_700_000_000_000;

const { freshPath, open, opened } = sqliteFiles();

/**
 * A store on its own connection whose write transactions (BEGIN IMMEDIATE … COMMIT, one fsync each) are counted:
 * the transaction functions the store builds from db.transaction() are wrapped before it opens.
 */
const openCounting = (path: string) => {
  const db = openSqlite({ path });
  const counter = { transactions: 0 };
  const build = db.transaction.bind(db);
  db.transaction = ((fn: (...args: unknown[]) => unknown) => {
    const t = build(fn);
    return Object.assign((...args: unknown[]) => t(...args), {
      ...t,
      immediate: (...args: unknown[]) => {
        counter.transactions += 1;
        return t.immediate(...args);
      },
    });
  }) as typeof db.transaction;
  const store = createSqliteTaskStore({ path, db });
  opened.push(store);
  ownDbs.push(db);
  return { store, counter };
};
const ownDbs: SqliteDatabase[] = [];

afterEach(() => {
  for (const db of ownDbs.splice(0)) db.close();
});

let contractPath = '';
runTaskStoreContract({
  name: 'sqlite (file)',
  newStore: () => open((contractPath = freshPath())),
  openPeer: () => open(contractPath),
});

describe('SQLite task store on a shared file', () => {
  const snapshot = async (store: TaskStore, id: string, now = T0): Promise<TaskSnapshot> => {
    const got = await store.get(id, ALICE, now);
    if (typeof got === 'string') throw new Error(`expected a snapshot of ${id}, got ${got}`);
    return got;
  };

  it('lets a second connection claim what the first created', async () => {
    const path = freshPath();
    const a = open(path);
    const b = open(path);
    const task = await a.create(newTask());
    expect(await b.countRunnable(T0)).toBe(1);
    const claimed = await b.claim('wb', 1_000, T0);
    expect(claimed).toMatchObject({ id: task.id, token: 1, takenOver: false });
    expect(await a.claim('wa', 1_000, T0 + 500)).toBeUndefined();
    expect(await b.finish(task.id, 1, { kind: 'completed', result: { via: 'b' } }, T0 + 1)).toBe(true);
    expect(await snapshot(a, task.id)).toMatchObject({ status: 'completed', result: { via: 'b' } });
  });

  it('never hands one task to two connections claiming at the same time', async () => {
    const path = freshPath();
    const a = open(path);
    const b = open(path);
    const tasks = Array.from({ length: 100 }, (_, i) => newTask({ createdAt: T0 + i }));
    await Promise.all(tasks.map((task) => a.create(task)));
    const claims: { worker: string; id: string; token: number }[] = [];
    const drain = async (store: TaskStore, worker: string): Promise<void> => {
      for (;;) {
        const task = await store.claim(worker, 60_000, T0 + 1_000);
        if (task === undefined) return;
        claims.push({ worker, id: task.id, token: task.token });
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    await Promise.all([drain(a, 'wa'), drain(b, 'wb'), drain(a, 'wa2'), drain(b, 'wb2')]);
    expect(claims).toHaveLength(100);
    expect(new Set(claims.map((c) => c.id)).size).toBe(100);
    expect(claims.every((c) => c.token === 1)).toBe(true);
    expect(claims.some((c) => c.worker.startsWith('wa'))).toBe(true);
    expect(claims.some((c) => c.worker.startsWith('wb'))).toBe(true);
    expect(await a.countRunnable(T0 + 1_000)).toBe(0);
    expect(await b.countRunnable(T0 + 1_000)).toBe(0);
  });

  it('keeps every task across close and reopen', async () => {
    const path = freshPath();
    const first = open(path);
    const working = await first.create(newTask({ createdAt: T0 }));
    const asking = await first.create(newTask({ createdAt: T0 + 1 }));
    const done = await first.create(newTask({ createdAt: T0 + 2, ttlMs: null }));
    const run1 = await first.claim('w', 1_000, T0 + 10);
    await first.saveStep(working.id, run1?.token ?? 0, 'fetched', { rows: 3 }, T0 + 10);
    await first.setStatusMessage(working.id, run1?.token ?? 0, 'Fetching.', T0 + 11);
    const run2 = await first.claim('w', 1_000, T0 + 10);
    await first.finish(
      asking.id,
      run2?.token ?? 0,
      { kind: 'input_required', requests: { k: { q: 1 } } },
      T0 + 12,
    );
    const run3 = await first.claim('w', 1_000, T0 + 10);
    await first.finish(done.id, run3?.token ?? 0, { kind: 'completed', result: { v: [1, 'two'] } }, T0 + 13);
    const before = await Promise.all(
      [working, asking, done].map((task) => snapshot(first, task.id, T0 + 20)),
    );
    expect(before.map((s) => s.status)).toEqual(['working', 'input_required', 'completed']);
    await first.close();

    const second = open(path);
    const after = await Promise.all(
      [working, asking, done].map((task) => snapshot(second, task.id, T0 + 20)),
    );
    expect(after).toEqual(before);
    // The interrupted run is taken over after its lease, with its step.
    const again = await second.claim('w2', 1_000, T0 + 2_000);
    expect(again).toMatchObject({
      id: working.id,
      token: 2,
      takenOver: true,
      steps: { fetched: { rows: 3 } },
    });
  });

  it('commits many creations issued in the same tick together, and all of them', async () => {
    const { store, counter } = openCounting(freshPath());
    const before = counter.transactions;
    const tasks = Array.from({ length: 200 }, (_, i) => newTask({ createdAt: T0 + i }));
    const created = await Promise.all(tasks.map((task) => store.create(task)));
    expect(created.map((s) => s.id)).toEqual(tasks.map((task) => task.id));
    const transactions = counter.transactions - before;
    expect(transactions).toBeGreaterThan(0);
    expect(transactions).toBeLessThan(tasks.length);
    const got = await Promise.all(tasks.map((task) => snapshot(store, task.id, T0 + 1_000)));
    expect(got.every((s) => s.status === 'working')).toBe(true);
    expect(await store.countRunnable(T0 + 1_000)).toBe(200);
  });

  it('commits creations and run endings of the same tick in one transaction', async () => {
    const { store, counter } = openCounting(freshPath());
    await store.create(newTask({ createdAt: T0 }));
    const claimed = await store.claim('w1', 1_000, T0);
    if (claimed === undefined) throw new Error('expected a claim');
    const before = counter.transactions;
    const fresh = newTask({ createdAt: T0 + 1 });
    const [created, finished] = await Promise.all([
      store.create(fresh),
      store.finish(claimed.id, claimed.token, { kind: 'completed', result: { ok: true } }, T0 + 2),
    ]);
    const transactions = counter.transactions - before;
    expect(transactions).toBe(1);
    expect(created.id).toBe(fresh.id);
    expect(finished).toBe(true);
    expect((await snapshot(store, claimed.id, T0 + 3)).status).toBe('completed');
    expect((await snapshot(store, fresh.id, T0 + 3)).status).toBe('working');
  });

  it('does not let a creation that cannot be stored sink a run ending of the same tick', async () => {
    const store = open(freshPath());
    const first = await store.create(newTask({ createdAt: T0 }));
    const claimed = await store.claim('w1', 1_000, T0);
    if (claimed === undefined) throw new Error('expected a claim');
    const other = newTask({ createdAt: T0 + 1 });
    const [duplicate, fresh, finished] = await Promise.allSettled([
      store.create(newTask({ id: first.id, createdAt: T0 + 1 })),
      store.create(other),
      store.finish(claimed.id, claimed.token, { kind: 'completed', result: { ok: true } }, T0 + 2),
    ]);
    expect(duplicate.status).toBe('rejected');
    expect(fresh).toMatchObject({ status: 'fulfilled', value: { id: other.id } });
    expect(finished).toEqual({ status: 'fulfilled', value: true });
    const done = await snapshot(store, first.id, T0 + 3);
    expect(done).toMatchObject({ status: 'completed', result: { ok: true } });
    expect((await snapshot(store, other.id, T0 + 3)).status).toBe('working');
  });

  it('keeps answering finished tasks from memory across purges, until they expire', async () => {
    const store = open(freshPath());
    const { db } = store;
    const task = await store.create(newTask({ createdAt: T0, ttlMs: 60_000 }));
    const claimed = await store.claim('w1', 1_000, T0);
    if (claimed === undefined) throw new Error('expected a claim');
    await store.finish(claimed.id, claimed.token, { kind: 'completed', result: { ok: true } }, T0 + 1);
    expect(await snapshot(store, task.id, T0 + 2)).toMatchObject({ status: 'completed' });
    // A change behind the store's back shows whether a read comes from memory or from the file.
    db.prepare(`UPDATE tasks SET status_message = 'changed in the file' WHERE id = ?`).run(task.id);
    // The worker purges every few seconds; a purge must not cost the live snapshots their place in memory.
    await store.purge(T0 + 3, 0);
    expect((await snapshot(store, task.id, T0 + 4)).statusMessage).not.toBe('changed in the file');
    // Once expired the task is not answered from memory, before or after the purge that removes it.
    expect(await store.get(task.id, ALICE, T0 + 60_000)).toBe('expired');
    await store.purge(T0 + 60_001, 0);
    expect(await store.get(task.id, ALICE, T0 + 60_002)).toBe('not_found');
  });

  it('rejects a creation after close', async () => {
    const store = open(freshPath());
    await store.close();
    await expect(store.create(newTask())).rejects.toThrow(/unavailable/i);
  });

  /** A store on a connection that records the SQL of every statement it prepares (to check their plans). */
  const recordingStore = () => {
    const path = freshPath();
    const db = openSqlite({ path });
    ownDbs.push(db);
    const statements: string[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      statements.push(sql);
      return prepare(sql);
    }) as typeof db.prepare;
    const store = createSqliteTaskStore({ path, db });
    opened.push(store);
    return { db, statements, store };
  };

  it('reads waiting tasks through the wake-up index, however many tasks are working', async () => {
    const { db, statements, store } = recordingStore();
    const sleeper = await store.create(newTask({ createdAt: T0 }));
    const run = await store.claim('w', 1_000, T0);
    expect(run?.id).toBe(sleeper.id);
    const wait = { kind: 'waiting', until: T0 + 30_000, statusMessage: 'Sleeping.' } as const;
    expect(await store.finish(sleeper.id, 1, wait, T0 + 1)).toBe(true);
    const queued = await store.create(newTask({ createdAt: T0 + 2 }));
    expect(await store.nextWakeAt?.(T0 + 2)).toBe(T0 + 30_000);
    // Woken, the sleeper queues again behind its owner's task queued meanwhile.
    expect((await store.claim('w', 1_000, T0 + 30_000))?.id).toBe(queued.id);
    expect((await store.claim('w', 1_000, T0 + 30_000))?.id).toBe(sleeper.id);

    // Every read of waiting tasks (the next due, the next wake-up, the counts of claimable tasks) goes through
    // tasks_wake, and those in wake-up order need no sort. SQLite plans without statistics: a table of a few rows
    // gets the plan a table of 100,000 sleeping tasks gets.
    // (Statements that only read the column, or count the tasks of another partial index, are not such reads.)
    const byWake = statements.filter(
      (sql) =>
        /^\s*SELECT\b/.test(sql) &&
        /\bWHERE\b[\s\S]*\bwake_at\b/.test(sql) &&
        !/INDEXED BY tasks_rate_waits/.test(sql),
    );
    expect(byWake.length).toBeGreaterThanOrEqual(4);
    for (const sql of byWake) {
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(sql.includes('@now') ? { now: T0 } : [T0]) as {
        detail: string;
      }[];
      const details = plan.map((p) => p.detail).join(' | ');
      expect(details, sql).toContain('INDEX tasks_wake');
      if (sql.includes('ORDER BY wake_at')) expect(details, sql).not.toContain('TEMP B-TREE');
    }
  });

  it('sweeps expired tasks and counts an owner’s unfinished ones through partial indexes, not every task', () => {
    const { db, statements } = recordingStore();
    const planOf = (pattern: RegExp, params: unknown[]): string => {
      const sql = statements.find((s) => pattern.test(s));
      if (sql === undefined) throw new Error(`no statement matches ${String(pattern)}`);
      return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[])
        .map((p) => p.detail)
        .join(' | ');
    };
    expect(planOf(/status = 'failed', error = \?/, ['{}', T0, T0, SWEEP_CHUNK])).toContain(
      'INDEX tasks_live_expiry',
    );
    expect(planOf(/DELETE FROM tasks WHERE id IN/, [T0, SWEEP_CHUNK])).toContain('INDEX tasks_expiry');
    expect(
      planOf(/SELECT count\(\*\) FROM tasks INDEXED BY tasks_owner_active/, ['acme', 'alice']),
    ).toContain('INDEX tasks_owner_active');
    // The sweep for live input waits whose lease lapsed reads those waits only, not every task waiting for input.
    const lapsed = statements.find((sql) => /SELECT id FROM tasks INDEXED BY tasks_live_input/.test(sql));
    if (lapsed === undefined) throw new Error('no statement finds lapsed live input waits');
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${lapsed}`).all({ now: T0, max: 1 }) as { detail: string }[];
    expect(plan.map((p) => p.detail).join(' | ')).toContain('INDEX tasks_live_input');
  });

  it('expires and purges a large backlog in chunks of bounded size, every task of it', async () => {
    const path = freshPath();
    const db = openSqlite({ path });
    ownDbs.push(db);
    // Every run of a sweep statement is recorded with how many rows it changed.
    const runs: { sql: string; changes: number }[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      const stmt = prepare(sql);
      if (!/^\s*(UPDATE tasks SET status = 'failed'|DELETE FROM (tasks|consumed_keys) WHERE)/.test(sql))
        return stmt;
      const run = stmt.run.bind(stmt);
      const all = stmt.all.bind(stmt);
      return Object.assign(stmt, {
        run: (...args: unknown[]) => {
          const r = run(...args);
          runs.push({ sql, changes: r.changes });
          return r;
        },
        all: (...args: unknown[]) => {
          const rows = all(...args);
          runs.push({ sql, changes: rows.length });
          return rows;
        },
      });
    }) as typeof db.prepare;
    const store = createSqliteTaskStore({ path, db });
    opened.push(store);
    const backlog = SWEEP_CHUNK * 2 + 5;
    await Promise.all(
      Array.from({ length: backlog }, (_, i) => store.create(newTask({ createdAt: T0 + i, ttlMs: 1_000 }))),
    );
    const kept = await store.create(newTask({ createdAt: T0, ttlMs: null }));
    for (let i = 0; i < backlog; i++) await store.consumeOnce(`key-${i}`, T0 + 10);

    const late = T0 + backlog + 1_000;
    expect(await store.expire(late)).toBe(backlog);
    expect(await store.purge(late, 0)).toBe(backlog);
    expect(await store.purge(late, 0)).toBe(0);
    expect(await store.consumeOnce('key-0', late + 10)).toBe(true);
    expect((await snapshot(store, kept.id, late)).status).toBe('working');
    expect(await store.stats?.(late)).toMatchObject({ runnable: 1 });

    // No statement touched more than a chunk; each kind ran several times to get through the backlog.
    expect(Math.max(...runs.map((r) => r.changes))).toBe(SWEEP_CHUNK);
    for (const kind of [/^\s*UPDATE tasks/, /DELETE FROM tasks/, /DELETE FROM consumed_keys/]) {
      const mine = runs.filter((r) => kind.test(r.sql));
      expect(mine.length, String(kind)).toBeGreaterThanOrEqual(3);
      expect(
        mine.reduce((n, r) => n + r.changes, 0),
        String(kind),
      ).toBe(backlog);
    }
  });

  it('adds the status index to a database holding tasks, and counts by status from it', async () => {
    const path = freshPath();
    const before = open(path);
    const done = await before.create(newTask({ createdAt: T0 }));
    await before.create(newTask({ createdAt: T0 + 1 }));
    const run = await before.claim('w', 1_000, T0);
    expect(run?.id).toBe(done.id);
    await before.finish(done.id, 1, { kind: 'completed', result: {} }, T0);
    await before.close();
    // Take the file back to the schema before migration 6.
    const raw = new Database(path);
    raw.exec('DROP INDEX tasks_status; DELETE FROM schema_migrations WHERE version = 6');
    raw.close();

    const after = open(path);
    expect(await after.stats?.(T0)).toEqual({
      byStatus: { working: 1, input_required: 0, completed: 1, failed: 0, cancelled: 0 },
      runnable: 1,
      parked: 0,
      parkedByTool: {},
      rateWaitsByTool: {},
      paused: 0,
      pausedByTool: {},
    });
    const check = new Database(path, { readonly: true });
    try {
      expect(check.prepare('SELECT version FROM schema_migrations WHERE version = 6').pluck().get()).toBe(6);
      const plan = check
        .prepare(`EXPLAIN QUERY PLAN SELECT count(*) FROM tasks WHERE status = 'completed'`)
        .all() as { detail: string }[];
      expect(plan.map((p) => p.detail).join(' ')).toContain('COVERING INDEX tasks_status');
    } finally {
      check.close();
    }
  });
});
