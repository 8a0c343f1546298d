// The PostgreSQL change feed across instances: LISTEN/NOTIFY delivery, committed snapshots, resyncs, reconnection.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { TaskChange } from '../../tasks/store.js';
import type { TaskOwner } from '../../tasks/task.js';
import { newTask } from '../task-store.contract.js';
import { LISTEN_APPLICATION_NAME } from './names.js';
import { withPostgres } from '../../../test/support/postgres.js';
import { usePostgresStores } from '../../../test/support/postgres-stores.js';

const T0 = 1_700_000_000_000;
const ALICE: TaskOwner = { tenant: 'acme', principal: 'alice' };

await withPostgres('the PostgreSQL change feed tests', () => {
  const { admin, open, freshSchema } = usePostgresStores('dmcp_feed');

  describe('PostgreSQL change feed across instances', () => {
    const listenPids = async (schema: string): Promise<number[]> => {
      const r = await admin.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query = $2`,
        [LISTEN_APPLICATION_NAME, `LISTEN ${pg.escapeIdentifier(`${schema}_task_changes`)}`],
      );
      return r.rows.map((row) => row.pid);
    };
    const waitFor = async <T>(
      probe: () => Promise<T | undefined> | T | undefined,
      ms = 5_000,
    ): Promise<T> => {
      const until = Date.now() + ms;
      for (;;) {
        const value = await probe();
        if (value !== undefined) return value;
        if (Date.now() > until) throw new Error('timed out waiting');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const delivered = (seen: TaskChange[], taskId: string) => () =>
      seen.some((c) => c.taskId === taskId) ? true : undefined;
    /** Two stores on a fresh schema, each with a subscriber recording its changes, both listening. */
    const twoListening = async () => {
      const schema = freshSchema();
      const a = open({ schema });
      const b = open({ schema });
      await a.countRunnable(T0); // migrated
      const seenA: TaskChange[] = [];
      const seenB: TaskChange[] = [];
      a.changes?.subscribe((c) => seenA.push(c));
      b.changes?.subscribe((c) => seenB.push(c));
      await waitFor(async () => ((await listenPids(schema)).length === 2 ? true : undefined));
      return { a, b, seenA, seenB };
    };

    it('delivers a change made through store A to a subscriber of store B within a second, once', async () => {
      const { a, b, seenA, seenB } = await twoListening();

      const started = Date.now();
      const task = await a.create(newTask());
      await waitFor(delivered(seenB, task.id), 1_000);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(seenB).toEqual([{ taskId: task.id, runnable: true, cancelRequested: false }]);

      const run = await b.claim('w', 1_000, T0);
      await a.requestCancel(task.id, ALICE, T0 + 1);
      await waitFor(() => (seenB.some((c) => c.cancelRequested) ? true : undefined), 1_000);
      await b.finish(task.id, run?.token ?? 0, { kind: 'cancelled' }, T0 + 2);
      await waitFor(() => (seenA.length === 3 ? true : undefined), 1_000);
      await new Promise((resolve) => setTimeout(resolve, 200));
      // A saw its own two changes once each (emitted locally, its own notices ignored) and B's one.
      expect(seenA).toEqual([
        { taskId: task.id, runnable: true, cancelRequested: false },
        { taskId: task.id, runnable: false, cancelRequested: true },
        { taskId: task.id, runnable: false, cancelRequested: false },
      ]);
      expect(seenB).toHaveLength(3);
    });

    it("carries the committed task in the changes of its own writes, never in those heard from another's", async () => {
      const { a, seenA, seenB } = await twoListening();

      const task = await a.create(newTask({ createdAt: T0, ttlMs: 60_000 }));
      const run = await a.claim('w', 1_000, T0);
      await a.setStatusMessage(task.id, run?.token ?? 0, 'Halfway.', T0 + 1);
      await a.finish(task.id, run?.token ?? 0, { kind: 'completed', result: { n: 7 } }, T0 + 2);
      const done = await a.get(task.id, ALICE, T0 + 3);
      const carried = seenA.filter((c) => c.committed !== undefined).map((c) => c.committed);
      expect(carried).toHaveLength(2);
      expect(carried[0]?.snapshot()).toMatchObject({ status: 'working', statusMessage: 'Halfway.' });
      expect(carried[1]?.snapshot()).toEqual(done);
      expect(carried[1]?.expiresAt).toBe(T0 + 60_000);
      expect(carried[1]?.revision).toBeGreaterThan(carried[0]?.revision ?? Infinity);

      // B hears the same changes through NOTIFY, without snapshots: its subscribers read.
      await waitFor(() => (seenB.length === 3 ? true : undefined), 1_000);
      expect(seenB.every((c) => c.committed === undefined)).toBe(true);
    });

    it('tells subscribers to read again when LISTEN takes effect, first and after every reconnection', async () => {
      const schema = freshSchema();
      const a = open({ schema });
      const b = open({ schema });
      await a.countRunnable(T0);
      let resyncs = 0;
      const seen: TaskChange[] = [];
      b.changes?.subscribe(
        (c) => seen.push(c),
        () => void resyncs++,
      );
      // Committed while B's LISTEN connection is still opening: unheard, so only the resync can reveal it.
      const early = await a.create(newTask());
      const [pid] = await waitFor(async () => {
        const pids = await listenPids(schema);
        return pids.length === 1 && resyncs === 1 ? pids : undefined;
      });
      expect(await b.get(early.id, ALICE, T0)).toMatchObject({ id: early.id });
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      await waitFor(() => (resyncs === 2 ? true : undefined), 10_000);
      const later = await a.create(newTask());
      await waitFor(delivered(seen, later.id), 1_000);
      expect(resyncs).toBe(2);
    });

    it('reconnects its LISTEN connection after the backend is killed, and delivers again', async () => {
      const schema = freshSchema();
      const a = open({ schema });
      const b = open({ schema });
      await a.countRunnable(T0);
      const seen: TaskChange[] = [];
      b.changes?.subscribe((c) => seen.push(c));
      const [pid] = await waitFor(async () => {
        const pids = await listenPids(schema);
        return pids.length === 1 ? pids : undefined;
      });
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      const [next] = await waitFor(async () => {
        const pids = await listenPids(schema);
        return pids.length === 1 && pids[0] !== pid ? pids : undefined;
      });
      expect(next).not.toBe(pid);

      const started = Date.now();
      const task = await a.create(newTask());
      await waitFor(delivered(seen, task.id), 1_000);
      expect(Date.now() - started).toBeLessThan(1_000);
    });
  });
});
