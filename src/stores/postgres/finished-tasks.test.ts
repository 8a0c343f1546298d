// Finished tasks answered from memory on PostgreSQL, only while the change feed hears every change: a purge through
// another instance lets go of them, a gap in the feed lets go of all, and without LISTEN nothing is remembered.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { TaskOwner } from '../../tasks/task.js';
import { newTask } from '../task-store.contract.js';
import { LISTEN_APPLICATION_NAME } from './names.js';
import { withPostgres } from '../../../test/support/postgres.js';
import { usePostgresStores } from '../../../test/support/postgres-stores.js';
import { waitUntil } from '../../../test/support/admin-api.js';

const T0 = 1_700_000_000_000;
const ALICE: TaskOwner = { tenant: 'acme', principal: 'alice' };
const BOB: TaskOwner = { tenant: 'acme', principal: 'bob' };

await withPostgres('the PostgreSQL finished-task memory tests', () => {
  const { admin, open, freshSchema } = usePostgresStores('dmcp_finished');

  const listenPids = async (schema: string): Promise<number[]> => {
    const r = await admin.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query = $2`,
      [LISTEN_APPLICATION_NAME, `LISTEN ${pg.escapeIdentifier(`${schema}_task_changes`)}`],
    );
    return r.rows.map((row) => row.pid);
  };
  /** Deletes a task's row behind the stores' backs: no notification, so only a read of the database sees it. */
  const deleteQuietly = (schema: string, id: string) =>
    admin.query(`DELETE FROM ${pg.escapeIdentifier(schema)}.tasks WHERE id = $1`, [id]);

  /**
   * Resolves once `store`'s LISTEN is in effect: its feed tells subscribers to read again then (and on every
   * reconnection, which `onResync` hears).
   */
  const listening = (store: ReturnType<typeof open>, onResync?: () => void) =>
    new Promise<void>((resolve) => {
      store.changes?.subscribe(
        () => undefined,
        () => {
          onResync?.();
          resolve();
        },
      );
    });

  /** A completed task created and finished through `a`. */
  const completed = async (a: ReturnType<typeof open>) => {
    const task = await a.create(newTask({ createdAt: T0, ttlMs: 3_600_000 }));
    const run = await a.claim('w', 60_000, T0);
    expect(run?.id).toBe(task.id);
    await a.finish(task.id, run!.token, { kind: 'completed', result: { n: 1 } }, T0 + 1);
    return task.id;
  };

  /** Stores A and B on a fresh schema, B listening, and a task A completed that B has read once. */
  const readOnceByListener = async () => {
    const schema = freshSchema();
    const a = open({ schema });
    const b = open({ schema });
    const id = await completed(a);
    await listening(b);
    expect(await b.get(id, ALICE, T0 + 2)).toMatchObject({ status: 'completed' });
    return { schema, a, b, id };
  };

  describe('PostgreSQL finished tasks from memory', () => {
    it('answers a finished task from memory once listening, to its owner only, until a purge elsewhere', async () => {
      const { schema, b, id } = await readOnceByListener();
      // Remembered: a row deleted behind its back is still answered, to its owner and to nobody else ...
      await deleteQuietly(schema, id);
      expect(await b.get(id, ALICE, T0 + 2)).toMatchObject({ id, status: 'completed', result: { n: 1 } });
      expect(await b.get(id, BOB, T0 + 2)).toBe('not_found');
      // ... until it expires, which the memory knows by itself.
      expect(await b.get(id, ALICE, T0 + 3_600_000)).toBe('not_found');
    });

    it('reads a finished task again once another instance purged it', async () => {
      const { a, b, id } = await readOnceByListener();
      expect(await a.admin!.purge({ tenants: 'all' }, id, T0 + 3)).toEqual({ ok: true });
      // A's purge notifies: B lets go of the task and reads the database, which no longer has it.
      await waitUntil(async () => (await b.get(id, ALICE, T0 + 3)) === 'not_found', 'the purge heard', 2_000);
    });

    it('answers from memory only what it read while listening: a quiet delete shows at once otherwise', async () => {
      const schema = freshSchema();
      const a = open({ schema });
      const quiet = open({ schema, listen: false });
      const id = await completed(a);
      expect(await quiet.get(id, ALICE, T0 + 2)).toMatchObject({ status: 'completed' });
      expect(await quiet.get(id, ALICE, T0 + 2)).toMatchObject({ status: 'completed' });
      await deleteQuietly(schema, id);
      expect(await quiet.get(id, ALICE, T0 + 2)).toBe('not_found');
    });

    it('lets go of everything when its LISTEN connection is dropped, and remembers again once it listens', async () => {
      const schema = freshSchema();
      const a = open({ schema });
      const b = open({ schema });
      const first = await completed(a);
      const second = await completed(a);
      let resyncs = 0;
      await listening(b, () => void resyncs++);
      const [pid] = await listenPids(schema);
      await b.get(first, ALICE, T0 + 2);
      await deleteQuietly(schema, first);
      expect(await b.get(first, ALICE, T0 + 2)).toMatchObject({ status: 'completed' });
      // The connection dies: changes may go unheard, so B reads the database again.
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      await waitUntil(
        async () => (await b.get(first, ALICE, T0 + 2)) === 'not_found',
        'the database read again',
      );
      // Once it listens again, what it reads is remembered again.
      await waitUntil(async () => resyncs === 2, 'LISTEN in effect again');
      expect(await b.get(second, ALICE, T0 + 2)).toMatchObject({ status: 'completed' });
      await deleteQuietly(schema, second);
      expect(await b.get(second, ALICE, T0 + 2)).toMatchObject({ status: 'completed' });
    });
  });
});
