// Durable commits synced off the event loop: a write answers only after the fdatasync of the WAL that covers it has
// finished, commits made while a sync is in flight share the next one, and a failed sync never answers success.
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sqliteFiles } from '../../../test/support/sqlite-files.js';
import { ALICE, LEASE, newTask, T0 } from '../contract/harness.contract.js';
import { StoreUnavailableError } from '../../tasks/errors.js';
import type { TaskChange } from '../../tasks/store.js';
import { walFiles } from './wal-sync.js';

const { freshPath, open } = sqliteFiles('durable-mcp-wal-sync-');

afterEach(() => {
  vi.restoreAllMocks();
});

/** Every fdatasync of a WAL held until the test releases (really syncing then) or fails it, in the order started. */
function heldSyncs() {
  const real = walFiles.fdatasync;
  const held: { release(): void; fail(err: Error): void }[] = [];
  const spy = vi.spyOn(walFiles, 'fdatasync').mockImplementation(
    (fd: number) =>
      new Promise<void>((resolve, reject) => {
        held.push({ release: () => void real(fd).then(resolve, reject), fail: reject });
      }),
  );
  /** The next held sync, once it has started. */
  const next = async () => {
    await vi.waitUntil(() => held.length > 0, { timeout: 5_000 });
    return held.shift() as (typeof held)[number];
  };
  return { spy, held, next };
}

/** Whether a promise has settled, tracked from now on. */
function tracked<T>(p: Promise<T>) {
  const state = { done: false, value: undefined as T | undefined, error: undefined as unknown };
  p.then(
    (v) => Object.assign(state, { done: true, value: v }),
    (e: unknown) => Object.assign(state, { done: true, error: e }),
  );
  return state;
}

/** A few turns of the event loop, with time for the thread pool. */
const turns = () => new Promise((resolve) => setTimeout(resolve, 30));
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('durable commits synced off the event loop (SQLite, synchronous FULL)', () => {
  it('answers a creation, and emits its change, only once the WAL sync after its commit has finished', async () => {
    const syncs = heldSyncs();
    const store = open(freshPath());
    const changes: TaskChange[] = [];
    store.changes?.subscribe((c) => changes.push(c));
    const task = newTask();
    const created = tracked(store.create(task));
    const sync = await syncs.next();
    await turns();
    // Committed (another connection sees it), yet neither answered nor announced.
    expect(created.done).toBe(false);
    expect(changes.filter((c) => c.taskId === task.id)).toEqual([]);
    sync.release();
    await vi.waitUntil(() => created.done);
    expect(created.error).toBeUndefined();
    expect(created.value?.id).toBe(task.id);
    expect(changes.some((c) => c.taskId === task.id)).toBe(true);
  });

  it('holds creations queued during a sync back for one transaction that the next sync covers', async () => {
    const syncs = heldSyncs();
    const path = freshPath();
    const store = open(path);
    const rows = (): unknown => {
      const other = new Database(path, { readonly: true });
      try {
        return other.prepare('SELECT count(*) FROM tasks').pluck().get();
      } finally {
        other.close();
      }
    };
    const first = tracked(store.create(newTask()));
    const sync1 = await syncs.next();
    // 40 creations in 8 turns of the event loop while the first sync is in flight: they would wait for the next
    // sync anyway, so they are not committed yet.
    const later: ReturnType<typeof tracked>[] = [];
    for (let t = 0; t < 8; t++) {
      for (let i = 0; i < 5; i++) later.push(tracked(store.create(newTask({ createdAt: T0 + t * 5 + i }))));
      await turn();
    }
    await turns();
    expect(rows()).toBe(1);
    expect(syncs.spy).toHaveBeenCalledTimes(1);
    sync1.release();
    await vi.waitUntil(() => first.done);
    const sync2 = await syncs.next();
    // Committed together before the second sync started, answered only once it has finished.
    expect(rows()).toBe(41);
    await turns();
    expect(later.filter((c) => c.done)).toEqual([]);
    sync2.release();
    await vi.waitUntil(() => later.every((c) => c.done));
    expect(later.filter((c) => c.error !== undefined)).toEqual([]);
    expect(syncs.spy).toHaveBeenCalledTimes(2);
  });

  it('covers the durable writes committed while a sync is in flight with the next one', async () => {
    const syncs = heldSyncs();
    const path = freshPath();
    const store = open(path);
    const task = newTask();
    const created = store.create(task);
    (await syncs.next()).release();
    await created;
    const claimed = await (store.claimBatch?.('worker', LEASE, T0 + 100, 1) ?? Promise.resolve([]));
    const token = claimed[0]?.token ?? 0;
    const before = syncs.spy.mock.calls.length;
    const first = tracked(store.saveStep(task.id, token, 's0', 0, T0 + 200));
    const sync1 = await syncs.next();
    // 10 step saves, each its own transaction, committed while the first sync is held.
    const saves = Array.from({ length: 10 }, (_, i) =>
      tracked(store.saveStep(task.id, token, `s${i + 1}`, i + 1, T0 + 200)),
    );
    await turns();
    const other = new Database(path, { readonly: true });
    try {
      expect(other.prepare('SELECT count(*) FROM task_steps').pluck().get()).toBe(11);
    } finally {
      other.close();
    }
    sync1.release();
    await vi.waitUntil(() => first.done);
    const sync2 = await syncs.next();
    await turns();
    expect(saves.filter((s) => s.done)).toEqual([]);
    sync2.release();
    await vi.waitUntil(() => saves.every((s) => s.done));
    expect(saves.map((s) => s.value)).toEqual(Array.from({ length: 10 }, () => true));
    expect(syncs.spy.mock.calls.length - before).toBe(2);
  });

  it('answers a claim, a step save and a read only once the creation before them is durable', async () => {
    const syncs = heldSyncs();
    const store = open(freshPath());
    const task = newTask();
    const created = tracked(store.create(task));
    const sync1 = await syncs.next();
    const claim = tracked(store.claimBatch?.('worker', LEASE, T0 + 100, 1) ?? Promise.resolve([]));
    const read = tracked(store.get(task.id, ALICE, T0 + 100));
    await turns();
    expect([created.done, claim.done, read.done]).toEqual([false, false, false]);
    sync1.release();
    await vi.waitUntil(() => claim.done && read.done);
    expect(claim.value).toHaveLength(1);
    const token = (claim.value as { token: number }[])[0]?.token ?? 0;

    const saved = tracked(store.saveStep(task.id, token, 'a', { v: 1 }, T0 + 200));
    const sync2 = await syncs.next();
    await turns();
    expect(saved.done).toBe(false);
    sync2.release();
    await vi.waitUntil(() => saved.done);
    expect(saved.value).toBe(true);
  });

  it('answers getNow at once only when nothing the owner would see waits for a sync', async () => {
    const syncs = heldSyncs();
    const store = open(freshPath());
    const task = newTask();
    const created = tracked(store.create(task));
    const sync = await syncs.next();
    // Committed, not yet durable: a promise, settled once the sync has finished.
    const pending = store.getNow?.(task.id, ALICE, T0 + 100);
    expect(pending).toBeInstanceOf(Promise);
    const read = tracked(pending as Promise<unknown>);
    await turns();
    expect([created.done, read.done]).toEqual([false, false]);
    sync.release();
    await vi.waitUntil(() => read.done);
    expect(read.value).toMatchObject({ id: task.id, status: 'working' });
    // Durable now: the snapshot itself, as get answers it; another owner's task is a missing one.
    const now = store.getNow?.(task.id, ALICE, T0 + 200);
    expect(now).not.toBeInstanceOf(Promise);
    expect(now).toEqual(await store.get(task.id, ALICE, T0 + 200));
    const bob = { tenant: ALICE.tenant, principal: 'bob' };
    expect(store.getNow?.(task.id, bob, T0 + 200)).toBe('not_found');
    expect(store.getNow?.(newTask().id, ALICE, T0 + 200)).toBe('not_found');
  });

  it('fails the writes a failed sync covered, and every durable write after it, never answering success', async () => {
    const syncs = heldSyncs();
    const store = open(freshPath());
    const created = store.create(newTask());
    const sync = await syncs.next();
    sync.fail(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    await expect(created).rejects.toThrow(StoreUnavailableError);
    await expect(created).rejects.toThrow(/WAL sync failed: EIO/);
    await expect(store.create(newTask())).rejects.toThrow(/WAL sync failed/);
    expect(syncs.spy).toHaveBeenCalledTimes(1);
  });

  it('waits on close for the sync in flight', async () => {
    const syncs = heldSyncs();
    const store = open(freshPath());
    const created = tracked(store.create(newTask()));
    const sync = await syncs.next();
    const closed = tracked(store.close());
    await turns();
    expect([created.done, closed.done]).toEqual([false, false]);
    sync.release();
    await vi.waitUntil(() => closed.done);
    expect(created.error).toBeUndefined();
  });

  it('syncs through the real file: every creation durable, one sync for a batch', async () => {
    const real = walFiles.fdatasync;
    const spy = vi.spyOn(walFiles, 'fdatasync').mockImplementation((fd: number) => real(fd));
    const path = freshPath();
    const store = open(path);
    const tasks = Array.from({ length: 50 }, (_, i) => newTask({ createdAt: T0 + i }));
    await Promise.all(tasks.map((t) => store.create(t)));
    expect(spy).toHaveBeenCalledTimes(1);
    const other = new Database(path, { readonly: true });
    try {
      expect(other.prepare('SELECT count(*) FROM tasks').pluck().get()).toBe(50);
    } finally {
      other.close();
    }
  });

  it.each([
    ['EXTRA', { synchronous: 'EXTRA' as const }],
    ['NORMAL', { synchronous: 'NORMAL' as const }],
  ])('leaves %s as configured: no sync of its own', async (_, options) => {
    const spy = vi.spyOn(walFiles, 'fdatasync');
    const store = open(freshPath(), options);
    await store.create(newTask());
    expect(spy).not.toHaveBeenCalled();
    expect(store.db.pragma('synchronous', { simple: true })).toBe(options.synchronous === 'EXTRA' ? 3 : 1);
  });

  it('keeps the connection at FULL between transactions, for writes made outside them', async () => {
    const store = open(freshPath());
    await store.create(newTask());
    // 2: FULL.
    expect(store.db.pragma('synchronous', { simple: true })).toBe(2);
  });
});
