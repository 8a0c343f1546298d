// The SQL a created-and-run task costs on PostgreSQL: the statements its creation, claim and ending send, counted at
// the driver, so that a statement or round trip added to these paths fails here first.
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LEASE, newTask, T0 } from '../contract/harness.contract.js';
import type { ClaimedTask } from '../../tasks/task.js';
import { withPostgres } from '../../../test/support/postgres.js';
import { usePostgresStores } from '../../../test/support/postgres-stores.js';

await withPostgres('the PostgreSQL statement counts', defineSuites);

/** The text of a query as node-postgres is handed it (a string or a query config). */
const textOf = (query: unknown): string =>
  (typeof query === 'string' ? query : String((query as { text?: unknown }).text ?? '')).trim();

function defineSuites(): void {
  const { open, freshSchema } = usePostgresStores('dmcp_stmts');
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** A store on a fresh, migrated schema, and the statements its connections send while `fn` runs. */
  async function countingStore() {
    const store = open({ schema: freshSchema() });
    await store.countRunnable(T0);
    const spy = vi.spyOn(pg.Client.prototype, 'query');
    const during = async (fn: () => Promise<unknown>): Promise<string[]> => {
      spy.mockClear();
      await fn();
      return spy.mock.calls.map(([query]) => textOf(query));
    };
    return { store, during };
  }

  const N = 10;

  describe('statements per created and run task (PostgreSQL)', () => {
    it('creates a batch with one statement, claims it with two and ends each task with one', async () => {
      const { store, during } = await countingStore();
      const tasks = Array.from({ length: N }, (_, i) => newTask({ createdAt: T0 + i }));
      const create = await during(() => Promise.all(tasks.map((task) => store.create(task))));
      expect(create).toHaveLength(1);
      expect(create[0]).toMatch(/^WITH input AS/);
      // Only the columns of the snapshot come back, not the arguments.
      expect(create[0]).not.toMatch(/RETURNING \*/);

      let claimed: ClaimedTask[] = [];
      const claim = await during(async () => {
        if (store.claimBatch === undefined) throw new Error('the PostgreSQL store claims in batches');
        claimed = await store.claimBatch('worker', LEASE, T0 + 100, N);
      });
      expect(claimed).toHaveLength(N);
      // The claim itself (waits come due, the line, the leases, what each run starts from) and the pauses in force.
      expect(claim).toHaveLength(2);
      expect(claim[0]).toMatch(/^WITH woken AS/);

      const end = await during(() =>
        Promise.all(
          claimed.map((task) =>
            store.finish(task.id, task.token, { kind: 'completed', result: { ok: true } }, T0 + 200),
          ),
        ),
      );
      // Each ending commits on its own: its UPDATE, its notification and its parent's wake-up in one statement.
      expect(end).toHaveLength(N);
      expect(end.every((sql) => sql.startsWith('WITH u AS'))).toBe(true);
    });
  });
}
