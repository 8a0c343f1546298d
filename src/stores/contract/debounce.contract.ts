// The TaskStore contract: debounce keys (NewTask.debounce): one pending task per key, owner and tool per window.
import { describe, expect, it } from 'vitest';
import { DebounceConflictError, IdempotencyConflictError } from '../../tasks/errors.js';
import type { TaskChange, TaskStore } from '../../tasks/store.js';
import type { NewTask } from '../../tasks/task.js';
import { ALICE, BOB, newTask, OTHER_TENANT, type ContractStore } from './harness.contract.js';

const PERIOD = 5_000;

export function debounceContract(h: ContractStore): void {
  describe('debounce keys', () => {
    const call = (overrides: Partial<NewTask> = {}, replace = false): NewTask =>
      newTask({
        createdAt: h.t,
        debounce: { key: 'sync-inbox', periodMs: PERIOD, ...(replace ? { replace } : {}) },
        ...overrides,
      });

    it('holds the first call until its window ends, and joins calls with equal arguments to it', async () => {
      const first = await h.store.create(call({ args: { a: 1, b: [1, { c: 2 }] } }));
      expect(first.debounced).toBeUndefined();
      expect(first.status).toBe('working');
      const again = await h.store.create(call({ createdAt: h.t + 1_000, args: { b: [1, { c: 2 }], a: 1 } }));
      expect(again).toMatchObject({ id: first.id, debounced: 'joined' });
      expect(await h.store.countActive(ALICE)).toBe(1);
      // Not before the window's end, then once.
      expect(await h.store.claim('w1', 1_000, h.t + PERIOD - 1)).toBeUndefined();
      const run = await h.claim('w1', h.t + PERIOD, 60_000);
      expect(run).toMatchObject({ id: first.id, args: { a: 1, b: [1, { c: 2 }] } });
      expect(await h.store.claim('w2', 1_000, h.t + PERIOD)).toBeUndefined();
    });

    it('does not show a task in its window as waiting for its rate limit, though it has a wake-up and a rate key', async () => {
      const rateLimit = { key: 'sync', limit: 1, periodMs: 60_000 };
      const first = await h.store.create(call({ rateLimit, statusMessage: 'Debounced.' }));
      expect((await h.snap(first.id, h.t + 1)).statusMessage).toBe('Debounced.');
    });

    it('refuses other arguments as an idempotency conflict, and creates nothing', async () => {
      const first = await h.store.create(call({ args: { n: 1 } }));
      const other = call({ args: { n: 2 }, createdAt: h.t + 10 });
      const refused = h.store.create(other);
      await expect(refused).rejects.toThrow(DebounceConflictError);
      await expect(refused).rejects.toBeInstanceOf(IdempotencyConflictError);
      expect(await h.store.get(other.id, ALICE, h.t + 10)).toBe('not_found');
      expect((await h.claim('w1', h.t + PERIOD, 60_000)).args).toEqual({ n: 1 });
      expect(first.id).toBeDefined();
    });

    it('with replace, gives the pending task the new arguments and tells its subscribers', async () => {
      const first = await h.store.create(call({ args: { n: 1 } }, true));
      const seen: TaskChange[] = [];
      const unsubscribe = h.store.changes?.subscribe((c) => seen.push(c));
      try {
        const later = await h.store.create(call({ args: { n: 2 }, createdAt: h.t + 100 }, true));
        expect(later).toMatchObject({ id: first.id, debounced: 'replaced', status: 'working' });
        expect(later.statusMessage).toContain('replaced by a later call');
        if (h.store.changes !== undefined)
          expect(seen).toContainEqual(expect.objectContaining({ taskId: first.id }));
      } finally {
        unsubscribe?.();
      }
      expect((await h.snap(first.id, h.t + 200)).statusMessage).toContain('replaced by a later call');
      // The window stays the first call's.
      expect(await h.store.claim('w1', 1_000, h.t + PERIOD - 1)).toBeUndefined();
      expect(await h.claim('w1', h.t + PERIOD, 60_000)).toMatchObject({ id: first.id, args: { n: 2 } });
      expect(await h.store.countActive(ALICE)).toBe(1);
      // Started: the window its status message named is over, and the message goes with it.
      expect((await h.snap(first.id, h.t + PERIOD + 1)).statusMessage).toBeUndefined();
    });

    it('gives a call after the task started a new task, even within the window by its clock', async () => {
      const first = await h.store.create(call({ args: { n: 1 } }, true));
      const run = await h.claim('w1', h.t + PERIOD, 60_000);
      // A caller whose clock lags: its call is within the window, but the task has started with its arguments.
      const late = await h.store.create(call({ args: { n: 2 }, createdAt: h.t + PERIOD - 1 }, true));
      expect(late.id).not.toBe(first.id);
      expect(late.debounced).toBeUndefined();
      expect(run.args).toEqual({ n: 1 });
      const equal = await h.store.create(call({ args: { n: 2 }, createdAt: h.t + PERIOD + 1 }));
      expect(equal).toMatchObject({ id: late.id, debounced: 'joined' });
      // The new window runs from the call that started it.
      expect(await h.store.claim('w2', 1_000, h.t + 2 * PERIOD - 2)).toBeUndefined();
      expect(await h.claim('w2', h.t + 2 * PERIOD - 1)).toMatchObject({ id: late.id, args: { n: 2 } });
    });

    it('starts a new window and task with the first call after a window ended', async () => {
      const first = await h.store.create(call());
      const next = await h.store.create(call({ createdAt: h.t + PERIOD, args: { other: true } }));
      expect(next.id).not.toBe(first.id);
      expect(next.debounced).toBeUndefined();
      // Both run: the first at its window's end, the second at its own.
      expect((await h.claim('w1', h.t + PERIOD, 60_000)).id).toBe(first.id);
      expect(await h.store.claim('w2', 1_000, h.t + PERIOD)).toBeUndefined();
      expect((await h.claim('w2', h.t + 2 * PERIOD)).id).toBe(next.id);
    });

    it('releases the key of a task cancelled or expired in its window', async () => {
      const first = await h.store.create(call({ ttlMs: 1_000 }));
      const afterExpiry = await h.store.create(call({ createdAt: h.t + 1_000 }));
      expect(afterExpiry.id).not.toBe(first.id);
      expect(await h.store.requestCancel(afterExpiry.id, ALICE, h.t + 1_001)).toMatchObject({ ok: true });
      const afterCancel = await h.store.create(call({ createdAt: h.t + 1_002 }));
      expect(afterCancel.id).not.toBe(afterExpiry.id);
      expect(afterCancel.debounced).toBeUndefined();
    });

    it('scopes a key by owner and tool: never joins across owners', async () => {
      const mine = await h.store.create(call());
      const ids = new Set([mine.id]);
      for (const overrides of [{ owner: BOB }, { owner: OTHER_TENANT }, { tool: 'other' }]) {
        const theirs = await h.store.create(call({ ...overrides, args: { theirs: true } }));
        expect(theirs.debounced).toBeUndefined();
        ids.add(theirs.id);
      }
      expect(ids.size).toBe(4);
      expect(await h.store.create(call({ createdAt: h.t + 1 }))).toMatchObject({
        id: mine.id,
        debounced: 'joined',
      });
    });

    it('does not count a joined or replacing call against the quota again', async () => {
      const first = await h.store.create(call({ activeLimit: 1 }, true));
      expect(await h.store.create(call({ activeLimit: 1 }))).toMatchObject({ id: first.id });
      const replaced = await h.store.create(call({ activeLimit: 1, args: { n: 9 } }, true));
      expect(replaced).toMatchObject({ id: first.id, debounced: 'replaced' });
      // A call that would start a new task is refused by the quota.
      await expect(h.store.create(call({ activeLimit: 1, createdAt: h.t + PERIOD }))).rejects.toThrow(
        /unfinished/i,
      );
    });

    it('lets an idempotency key naming a live task decide first', async () => {
      const keyed = await h.store.create(call({ idempotencyKey: 'k1', args: { n: 1 } }));
      // After the window, the retried call still gets its task, not a new one.
      const retry = await h.store.create(
        call({ idempotencyKey: 'k1', args: { n: 1 }, createdAt: h.t + PERIOD + 1 }),
      );
      expect(retry.id).toBe(keyed.id);
      // A new idempotency key within a window joins the pending task.
      const second = await h.store.create(call({ idempotencyKey: 'k2', createdAt: h.t + PERIOD + 2 }));
      const joined = await h.store.create(call({ idempotencyKey: 'k3', createdAt: h.t + PERIOD + 3 }));
      expect(joined).toMatchObject({ id: second.id, debounced: 'joined' });
      await expect(
        h.store.create(call({ idempotencyKey: 'k1', args: { n: 2 }, createdAt: h.t + PERIOD + 4 })),
      ).rejects.toThrow(IdempotencyConflictError);
    });

    it('decides a replacement racing the start in one step: the new arguments run, or the call gets a new task', async () => {
      const peer = h.openPeer === undefined ? h.store : await h.openPeer();
      try {
        for (let round = 0; round < 8; round++) {
          const at = h.t + round * 10 * PERIOD;
          const key = { debounce: { key: `race-${round}`, periodMs: PERIOD, replace: true } };
          const first = await h.store.create(newTask({ ...key, createdAt: at, args: { v: 'old' } }));
          // The claim at the window's end and a call whose clock is 1 ms behind, on two instances at once.
          const [raced, call] = await Promise.all([
            h.store.claim('w1', 60_000, at + PERIOD),
            peer.create(newTask({ ...key, createdAt: at + PERIOD - 1, args: { v: 'new' } })),
          ]);
          // A claim may pass over the row while the replacement holds it (PostgreSQL's SKIP LOCKED): it comes next.
          const run = raced ?? (await h.store.claim('w1', 60_000, at + PERIOD));
          expect(run?.id).toBe(first.id);
          if (call.id === first.id) {
            expect(call.debounced).toBe('replaced');
            expect(run?.args).toEqual({ v: 'new' });
          } else {
            expect(call.debounced).toBeUndefined();
            expect(run?.args).toEqual({ v: 'old' });
          }
          expect(await h.store.finish(first.id, run?.token ?? 0, { kind: 'cancelled' }, at + PERIOD)).toBe(
            true,
          );
          if (call.id !== first.id) await h.store.requestCancel(call.id, ALICE, at + PERIOD);
        }
      } finally {
        if (peer !== h.store) await peer.close();
      }
    });

    it('makes concurrent calls with one key, here and on a second instance, one task', async () => {
      const peer = h.openPeer === undefined ? h.store : await h.openPeer();
      try {
        const created = await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            (i % 2 === 0 ? h.store : peer).create(call({ createdAt: h.t + i })),
          ),
        );
        expect(new Set(created.map((c) => c.id)).size).toBe(1);
        expect(created.filter((c) => c.debounced === undefined)).toHaveLength(1);
        expect(await h.store.countActive(ALICE)).toBe(1);
        // Concurrent replacing calls: one task, holding one of their arguments.
        const replacing = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            (i % 2 === 0 ? h.store : peer).create(call({ createdAt: h.t + 20 + i, args: { i } }, true)),
          ),
        );
        expect(new Set(replacing.map((c) => c.id))).toEqual(new Set([created[0]?.id]));
        // The window runs from the first call to commit, one of the first twelve.
        const run = await h.claim('w1', h.t + PERIOD + 12, 60_000);
        expect(replacing.map((_, i) => i)).toContain(run.args.i);
        expect(await h.store.countActive(ALICE)).toBe(1);
      } finally {
        if (peer !== h.store) await peer.close();
      }
    });
  });
}

/** After an upgrade from a release before debounce keys: calls within a window of tasks created now make one task. */
export async function expectDebounceAfterUpgrade(store: TaskStore, now: number): Promise<void> {
  const debounce = { key: 'after-upgrade', periodMs: PERIOD, replace: true };
  const first = await store.create(newTask({ createdAt: now, debounce, args: { n: 1 } }));
  const later = await store.create(newTask({ createdAt: now + 1, debounce, args: { n: 2 } }));
  expect(later).toMatchObject({ id: first.id, debounced: 'replaced' });
  let run = await store.claim('w', 60_000, now + PERIOD);
  // Tasks left runnable by the upgrade test run first.
  while (run !== undefined && run.id !== first.id) run = await store.claim('w', 60_000, now + PERIOD);
  expect(run).toMatchObject({ id: first.id, args: { n: 2 } });
}
