// The SQLite store when the file is locked by another process or full: bounded, non-blocking waits, clean errors.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../tasks/errors.js';
import type { TaskOwner } from '../../tasks/task.js';
import { newTask } from '../task-store.contract.js';
import { createSqliteTaskStore, type SqliteTaskStoreOptions } from './task-store.js';
import { isDataError, translate } from './write-retry.js';

const ALICE: TaskOwner = { tenant: 'acme', principal: 'alice' };
const T0 = 1_700_000_000_000;

const dirs: string[] = [];
const closers: (() => unknown)[] = [];
const freshPath = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-sqlite-faults-'));
  dirs.push(dir);
  return join(dir, 'tasks.db');
};
const open = (options: SqliteTaskStoreOptions) => {
  const store = createSqliteTaskStore(options);
  closers.push(() => store.close());
  return store;
};
/** Another process's connection holding the write lock. */
const lockFile = (path: string) => {
  const other = new Database(path, { fileMustExist: true });
  other.exec('BEGIN IMMEDIATE');
  let held = true;
  const release = (): void => {
    if (!held) return;
    held = false;
    other.exec('ROLLBACK');
    other.close();
  };
  closers.push(release);
  return release;
};
const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ ok: true as const, value, at: performance.now() }),
    (error: unknown) => ({ ok: false as const, error, at: performance.now() }),
  );

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('SQLite store while another connection holds the write lock', () => {
  it('keeps the event loop free and fails writes with SQLITE_BUSY after the busy timeout', async () => {
    const path = freshPath();
    const store = open({ path, busyTimeoutMs: 400 });
    const release = lockFile(path);
    let ticks = 0;
    const ticker = setInterval(() => (ticks += 1), 10);
    const started = performance.now();
    const outcome = await settle(store.create(newTask()));
    clearInterval(ticker);
    expect(outcome.ok).toBe(false);
    expect(outcome.ok ? undefined : outcome.error).toBeInstanceOf(StoreUnavailableError);
    expect((outcome.ok ? undefined : outcome.error) as Error).toMatchObject({
      message: 'Task store unavailable: SQLITE_BUSY',
    });
    const waited = outcome.at - started;
    expect(waited).toBeGreaterThanOrEqual(350);
    expect(waited).toBeLessThan(1_500);
    // A blocking busy_timeout would have stalled the timer for the whole wait.
    expect(ticks).toBeGreaterThan(waited / 10 / 3);
    release();
    expect((await store.create(newTask())).status).toBe('working');
  });

  it('completes a write that was waiting once the lock is released before the deadline', async () => {
    const path = freshPath();
    const store = open({ path, busyTimeoutMs: 3_000 });
    const release = lockFile(path);
    const pending = settle(store.create(newTask()));
    setTimeout(release, 200);
    const outcome = await pending;
    expect(outcome.ok).toBe(true);
  });

  it('fails a group of creations together instead of retrying each row past the timeout', async () => {
    const path = freshPath();
    const store = open({ path, busyTimeoutMs: 300 });
    const release = lockFile(path);
    const started = performance.now();
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => settle(store.create(newTask()))));
    const last = Math.max(...outcomes.map((o) => o.at)) - started;
    expect(outcomes.every((o) => !o.ok && o.error instanceof StoreUnavailableError)).toBe(true);
    // One shared wait, not eight waits in a row.
    expect(last).toBeLessThan(1_200);
    release();
    const reader = new Database(path, { readonly: true });
    closers.push(() => reader.close());
    expect(reader.prepare('SELECT count(*) AS n FROM tasks').get()).toEqual({ n: 0 });
  });

  it('still retries row by row when one creation of a group breaks a constraint', async () => {
    const store = open({ path: freshPath() });
    const first = newTask();
    await store.create(first);
    const outcomes = await Promise.all(
      [newTask(), { ...newTask(), id: first.id }, newTask()].map((t) => settle(store.create(t))),
    );
    expect(outcomes.map((o) => o.ok)).toEqual([true, false, true]);
  });

  it('waits out the lock for the other writes too (claim, answer, cancel)', async () => {
    const path = freshPath();
    const store = open({ path, busyTimeoutMs: 2_000 });
    const task = await store.create(newTask());
    const release = lockFile(path);
    const claim = settle(store.claim('w1', 1_000, T0));
    const cancel = settle(store.requestCancel(task.id, ALICE, T0));
    setTimeout(release, 150);
    expect((await claim).ok).toBe(true);
    expect((await cancel).ok).toBe(true);
  });
});

describe('SQLite store on a full disk', () => {
  it('answers SQLITE_FULL cleanly, writes nothing, and recovers when space returns', async () => {
    const store = open({ path: freshPath() });
    await store.create(newTask());
    // The store's own connection may not grow the file past its current size: the same errors as a full disk.
    const pages = store.db.pragma('page_count', { simple: true }) as number;
    store.db.pragma(`max_page_count = ${pages}`);
    const big = { text: 'x'.repeat(200_000) };
    const ids = Array.from({ length: 3 }, () => newTask({ args: big }));
    const outcomes = await Promise.all(ids.map((t) => settle(store.create(t))));
    for (const o of outcomes) {
      expect(o.ok).toBe(false);
      expect(o.ok ? undefined : o.error).toBeInstanceOf(StoreUnavailableError);
      expect(((o.ok ? undefined : o.error) as Error).message).toMatch(/^Task store unavailable: SQLITE_FULL/);
    }
    for (const t of ids) expect(await store.get(t.id, ALICE, T0)).toBe('not_found');
    store.db.pragma('max_page_count = 1073741823');
    const after = await store.create(newTask({ args: big }));
    expect(after.status).toBe('working');
  });
});

describe('SQLite error classification', () => {
  it('tells errors about one row from errors about the file', () => {
    const err = (code: string) => Object.assign(new Error(code), { code });
    expect(isDataError(err('SQLITE_CONSTRAINT_PRIMARYKEY'))).toBe(true);
    expect(isDataError(translate(err('SQLITE_CONSTRAINT_UNIQUE')))).toBe(true);
    expect(isDataError(new RangeError('bad value'))).toBe(true);
    for (const code of ['SQLITE_BUSY', 'SQLITE_FULL', 'SQLITE_IOERR_WRITE', 'SQLITE_READONLY'])
      expect(isDataError(err(code))).toBe(false);
    expect(isDataError(new StoreUnavailableError('SQLITE_BUSY'))).toBe(false);
    expect((translate(err('SQLITE_IOERR_WRITE')) as Error).message).toBe(
      'Task store unavailable: SQLITE_IOERR_WRITE',
    );
    expect((translate(new TypeError('The database connection is not open')) as Error).message).toBe(
      'Task store unavailable: store is closed',
    );
  });
});
