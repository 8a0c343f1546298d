// The PostgreSQL store: the shared contract on a throwaway schema, plus what only several connections can show
// (the change feed across instances and the database going away have files of their own).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { StoreUnavailableError } from '../../tasks/errors.js';
import { createPayloadCipher, parseKeyring } from '../../tasks/payload-cipher.js';
import type { TaskStore } from '../../tasks/store.js';
import type { ClaimedTask, TaskOwner } from '../../tasks/task.js';
import {
  expectUpgradedInspection,
  expectUpgradedErrorOutcomes,
  expectUpgradedOutcomes,
  expectUpgradedTasksResume,
  newTask,
  runTaskStoreContract,
  sealingSensitive,
  seedErrorOutcomeTasks,
  seedOutcomeTasks,
  seedUpgradeTasks,
  seedLineBeforeUpgrade,
  expectUpgradedLineOrder,
} from '../task-store.contract.js';
import { migrate, postgresMigrations } from './migrations.js';
import { schemaNames } from './names.js';
import { buildQueries } from './queries.js';
import { createPostgresTaskStore } from './task-store.js';
import { TEST_POSTGRES_URL as URL, withPostgres } from '../../../test/support/postgres.js';
import { usePostgresStores } from '../../../test/support/postgres-stores.js';

const T0 = 1_700_000_000_000;
const ALICE: TaskOwner = { tenant: 'acme', principal: 'alice' };

await withPostgres('the PostgreSQL store tests', defineSuites);

function defineSuites(): void {
  const { admin, open, freshSchema, schema: SCHEMA } = usePostgresStores('dmcp_test');

  beforeAll(async () => {
    await migrate(admin, SCHEMA);
  });

  // Every contract test starts from empty tables in the file's schema.
  runTaskStoreContract({
    name: 'postgres',
    newStore: async () => {
      await admin.query(
        `TRUNCATE ${pg.escapeIdentifier(SCHEMA)}.tasks, ${pg.escapeIdentifier(SCHEMA)}.slot_holders CASCADE`,
      );
      return createPostgresTaskStore({ connectionString: URL, schema: SCHEMA, poolSize: 4 });
    },
    openPeer: () => createPostgresTaskStore({ connectionString: URL, schema: SCHEMA, poolSize: 4 }),
  });

  describe('PostgreSQL lookups by id', () => {
    it('use the primary key, not the owner listing index, on a table that grew without analysis', async () => {
      const schema = freshSchema();
      const store = open({ schema });
      const owner: TaskOwner = { tenant: 'acme', principal: 'alice' };
      const ids: string[] = [];
      for (let batch = 0; batch < 10; batch++) {
        const created = await Promise.all(
          Array.from({ length: 500 }, () => store.create(newTask({ owner }))),
        );
        ids.push(...created.map((task) => task.id));
      }
      const q = buildQueries(schemaNames(schema), 'test');
      for (const [name, sql] of [
        ['getOwned', q.getOwned],
        ['lockOwned', q.lockOwned],
      ] as const) {
        const { rows } = await admin.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, [
          ids[1234],
          owner.tenant,
          owner.principal,
        ]);
        const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
        expect(plan, name).toMatch(/using tasks_pkey/);
        expect(plan, name).not.toMatch(/tasks_owner_created/);
      }
      // Coalesced polls: one primary-key probe per id, never a scan of the table (as a hash join would).
      const { rows } = await admin.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${q.getOwnedMany}`, [
        ids.slice(0, 20),
        Array(20).fill(owner.tenant),
        Array(20).fill(owner.principal),
      ]);
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).toMatch(/Index Scan using tasks_pkey/);
      expect(plan).not.toMatch(/Seq Scan on tasks|tasks_owner_created/);
      expect(await store.get(ids[1234] as string, owner, 1_700_000_000_001)).toMatchObject({ id: ids[1234] });
      expect(await store.get(ids[1234] as string, { ...owner, principal: 'bob' }, 1_700_000_000_001)).toBe(
        'not_found',
      );
    });
  });

  describe('PostgreSQL prepared statements', () => {
    const preparedOn = async (store: TaskStore & { pool: pg.Pool }): Promise<string[]> => {
      const { rows } = await store.pool.query<{ name: string }>('SELECT name FROM pg_prepared_statements');
      return rows.map((r) => r.name);
    };

    it('runs statements with parameters as named prepared statements, unless turned off', async () => {
      const schema = freshSchema();
      // One connection each, so the statements listed are those the store ran.
      const prepared = open({ schema, poolSize: 1 });
      const plain = open({ schema, poolSize: 1, preparedStatements: false });
      for (const store of [prepared, plain]) {
        const task = await store.create(newTask({ createdAt: T0 }));
        expect(await store.get(task.id, ALICE, T0 + 1)).toMatchObject({ id: task.id, status: 'working' });
        expect(await store.get(task.id, ALICE, T0 + 2)).toMatchObject({ id: task.id });
      }
      const names = await preparedOn(prepared);
      expect(names.filter((n) => n.startsWith('dmcp_')).length).toBeGreaterThanOrEqual(2);
      expect(await preparedOn(plain)).toEqual([]);
    });

    it('runs a statement again, unprepared, when another process changed the shape of its result', async () => {
      const schema = freshSchema();
      const store = open({ schema, poolSize: 1 });
      const sessions = store.sessions;
      if (sessions === undefined) throw new Error('expected sessions');
      const id = `s-${randomBytes(6).toString('hex')}`;
      await sessions.createSession({
        id,
        owner: ALICE,
        state: { n: 1 },
        createdAt: T0,
        expiresAt: T0 + 60_000,
      });
      expect(await sessions.getSession(id, ALICE)).toMatchObject({ id, state: { n: 1 } });
      // What a later migration run by another replica might do: the prepared `SELECT *` now returns more columns.
      await admin.query(`ALTER TABLE ${pg.escapeIdentifier(schema)}.sessions ADD COLUMN note text`);
      expect(await sessions.getSession(id, ALICE)).toMatchObject({ id, state: { n: 1 } });
      expect(await sessions.getSession(id, ALICE)).toMatchObject({ id, state: { n: 1 } });
    });
  });

  describe('PostgreSQL task store with several instances', () => {
    it('hands each of 200 tasks to exactly one claimer across two pools claiming at once', async () => {
      const schema = freshSchema();
      const a = open({ schema, poolSize: 10 });
      const b = open({ schema, poolSize: 10 });
      const tasks = Array.from({ length: 200 }, (_, i) => newTask({ createdAt: T0 + i }));
      await Promise.all(tasks.map((task) => a.create(task)));
      const claims: { store: string; task: ClaimedTask }[] = [];
      const claimOnce = async (store: TaskStore, name: string, worker: string): Promise<boolean> => {
        const task = await store.claim(worker, 60_000, T0 + 1_000);
        if (task !== undefined) claims.push({ store: name, task });
        return task !== undefined;
      };
      // 200 claims in flight at once, half through each pool…
      await Promise.all(
        tasks.map((_, i) => (i % 2 === 0 ? claimOnce(a, 'a', `wa${i}`) : claimOnce(b, 'b', `wb${i}`))),
      );
      // …then drain whatever a claim skipped because another held its row lock at that instant.
      const drain = async (store: TaskStore, name: string): Promise<void> => {
        while (await claimOnce(store, name, `drain-${name}`));
      };
      await Promise.all([drain(a, 'a'), drain(b, 'b'), drain(a, 'a'), drain(b, 'b')]);

      expect(claims).toHaveLength(200);
      expect(new Set(claims.map((c) => c.task.id)).size).toBe(200);
      expect(claims.every((c) => c.task.token === 1 && !c.task.takenOver)).toBe(true);
      expect(claims.some((c) => c.store === 'a')).toBe(true);
      expect(claims.some((c) => c.store === 'b')).toBe(true);
      // While the leases hold, nothing more is handed out.
      expect(await a.claim('late', 60_000, T0 + 2_000)).toBeUndefined();
      expect(await b.claim('late', 60_000, T0 + 2_000)).toBeUndefined();
      expect(await b.countRunnable(T0 + 2_000)).toBe(0);
      expect(await a.stats?.(T0 + 2_000)).toEqual({
        byStatus: { working: 200, input_required: 0, completed: 0, failed: 0, cancelled: 0 },
        runnable: 0,
        parked: 0,
        parkedByTool: {},
        rateWaitsByTool: {},
        paused: 0,
        pausedByTool: {},
      });
    });

    it('migrates once when three instances start at the same time', async () => {
      const schema = freshSchema();
      const pools = [1, 2, 3].map(() => new pg.Pool({ connectionString: URL, max: 2 }));
      try {
        const applied = await Promise.all(pools.map((pool) => migrate(pool, schema)));
        expect(applied.flat().sort((a, b) => a - b)).toEqual(postgresMigrations.map((m) => m.version));
        expect(await migrate(pools[0] as pg.Pool, schema)).toEqual([]);
      } finally {
        await Promise.all(pools.map((pool) => pool.end()));
      }
      // Stores migrate lazily on their first statement, also all at once.
      const lazy = freshSchema();
      const stores = [1, 2, 3].map(() => open({ schema: lazy }));
      expect(await Promise.all(stores.map((store) => store.countRunnable(T0)))).toEqual([0, 0, 0]);
      const versions = await admin.query(
        `SELECT version FROM ${pg.escapeIdentifier(lazy)}.schema_migrations ORDER BY version`,
      );
      expect(versions.rows).toEqual(postgresMigrations.map((m) => ({ version: m.version })));
    });

    it('migrates a schema of the release before waits and idempotency keys; its tasks resume as before', async () => {
      const schema = freshSchema();
      const s = pg.escapeIdentifier(schema);
      const before = open({ schema });
      const seeded = await seedUpgradeTasks(before, T0);
      // Take the schema back to that release (before migration 7).
      await admin.query(`DROP TABLE ${s}.task_step_attempts`);
      await admin.query(`DROP INDEX ${s}.tasks_live_expiry`);
      await admin.query(
        `ALTER TABLE ${s}.tasks DROP COLUMN wake_at, DROP COLUMN idempotency_key, DROP COLUMN failure`,
      );
      await admin.query(`DELETE FROM ${s}.schema_migrations WHERE version = 7`);

      expect(await migrate(admin, schema)).toEqual([7]);
      const after = open({ schema });
      await expectUpgradedTasksResume(after, seeded, T0);
    });

    it('migrates a schema of the release before status history and step timings; its tasks resume and read', async () => {
      const schema = freshSchema();
      const s = pg.escapeIdentifier(schema);
      const before = open({ schema });
      const seeded = await seedUpgradeTasks(before, T0);
      // Take the schema back to that release (before migration 13).
      await admin.query(`
        DROP TABLE ${s}.task_history;
        DROP TRIGGER task_history_changed ON ${s}.tasks; DROP FUNCTION ${s}.task_history_changed();
        ALTER TABLE ${s}.tasks DROP COLUMN created_message;
        ALTER TABLE ${s}.task_steps DROP COLUMN started_at, DROP COLUMN saved_at;
        DELETE FROM ${s}.schema_migrations WHERE version = 13`);

      expect(await migrate(admin, schema)).toEqual([13]);
      const after = open({ schema });
      await expectUpgradedTasksResume(after, seeded, T0);
      await expectUpgradedInspection(after, seeded, T0);
      // Purging a task takes its history with it.
      expect(await after.purge(T0 + 3_600_000, 0)).toBe(2);
      const left = await admin.query(`SELECT count(*)::int AS n FROM ${s}.task_history`);
      expect(left.rows).toEqual([{ n: 0 }]);
    });

    it('migrates a schema of the release before outcomes: its finished tasks get theirs, tool errors marked', async () => {
      const schema = freshSchema();
      const s = pg.escapeIdentifier(schema);
      const sealing = sealingSensitive();
      const before = open({ schema, ...sealing });
      const seeded = await seedOutcomeTasks(before, T0);
      // Take the schema back to that release (before migration 14).
      await admin.query(`
        DROP INDEX ${s}.tasks_tool_errors; DROP INDEX ${s}.tasks_retries;
        ALTER TABLE ${s}.tasks DROP COLUMN tool_error, DROP COLUMN retry_of;
        DELETE FROM ${s}.schema_migrations WHERE version = 14`);

      expect(await migrate(admin, schema)).toEqual([14]);
      await expectUpgradedOutcomes(open({ schema, ...sealing }), seeded, T0);
    });

    it('migrates a schema of the release before error outcomes: its plain outcome-unknown failures are found', async () => {
      const schema = freshSchema();
      const s = pg.escapeIdentifier(schema);
      const sealing = sealingSensitive();
      const before = open({ schema, ...sealing });
      const seeded = await seedErrorOutcomeTasks(before, T0);
      // Take the schema back to that release (before migration 18).
      await admin.query(`
        DROP INDEX ${s}.tasks_error_outcomes; ALTER TABLE ${s}.tasks DROP COLUMN error_outcome;
        DELETE FROM ${s}.schema_migrations WHERE version = 18`);

      expect(await migrate(admin, schema)).toEqual([18]);
      await expectUpgradedErrorOutcomes(open({ schema, ...sealing }), seeded, T0);
    });

    it('migrates a schema of the release before places in line kept their time; its line keeps its order', async () => {
      const schema = freshSchema();
      const s = pg.escapeIdentifier(schema);
      const before = open({ schema });
      const waiting = await seedLineBeforeUpgrade(before, T0);
      // Take the schema back to that release (before migration 16).
      await admin.query(`
        DROP INDEX ${s}.tasks_fair; ALTER TABLE ${s}.tasks DROP COLUMN placed_at;
        CREATE INDEX tasks_fair ON ${s}.tasks (fair_at NULLS FIRST, created_at) WHERE runnable;
        DELETE FROM ${s}.schema_migrations WHERE version = 16`);

      expect(await migrate(admin, schema)).toEqual([16]);
      const after = open({ schema });
      await expectUpgradedLineOrder(after, waiting, T0);
    });

    it('adds the status index to a schema holding tasks, and counts by status with it', async () => {
      const schema = freshSchema();
      const s = pg.escapeIdentifier(schema);
      const before = open({ schema });
      const done = await before.create(newTask({ createdAt: T0 }));
      await before.create(newTask({ createdAt: T0 + 1 }));
      expect((await before.claim('w', 1_000, T0))?.id).toBe(done.id);
      await before.finish(done.id, 1, { kind: 'completed', result: {} }, T0);
      // Take the schema back to before migration 4.
      await admin.query(`DROP INDEX ${s}.tasks_status`);
      await admin.query(`DELETE FROM ${s}.schema_migrations WHERE version = 4`);

      expect(await migrate(admin, schema)).toEqual([4]);
      expect(await open({ schema }).stats?.(T0)).toEqual({
        byStatus: { working: 1, input_required: 0, completed: 1, failed: 0, cancelled: 0 },
        runnable: 1,
        parked: 0,
        parkedByTool: {},
        rateWaitsByTool: {},
        paused: 0,
        pausedByTool: {},
      });
      // Two rows never make an index worth it to the planner: forbid sequential scans to see that it can serve.
      const client = await admin.connect();
      try {
        await client.query('BEGIN');
        await client.query('SET LOCAL enable_seqscan = off');
        const plan = await client.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN SELECT count(*) FROM ${s}.tasks WHERE status = 'completed'`,
        );
        expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('tasks_status');
      } finally {
        await client.query('ROLLBACK');
        client.release();
      }
    });

    it('inserts creations of one tick with fewer statements than tasks, and isolates a bad one', async () => {
      const store = open();
      const query = vi.spyOn(store.pool, 'query');
      const tasks = Array.from({ length: 100 }, (_, i) => newTask({ createdAt: T0 + i }));
      const created = await Promise.all(tasks.map((task) => store.create(task)));
      const textOf = (q: unknown): string =>
        typeof q === 'string' ? q : String((q as { text?: unknown }).text);
      const inserts = query.mock.calls.filter(([q]) => textOf(q).includes('INSERT INTO')).length;
      query.mockRestore();
      expect(created.map((s) => s.id)).toEqual(tasks.map((t) => t.id));
      expect(inserts).toBeGreaterThan(0);
      expect(inserts).toBeLessThan(10);

      const [first] = tasks;
      const batch = [newTask(), newTask({ id: first?.id }), newTask()];
      const results = await Promise.allSettled(batch.map((task) => store.create(task)));
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      const failure = (results[1] as PromiseRejectedResult).reason as unknown;
      expect(failure).toBeInstanceOf(StoreUnavailableError);
      expect(String(failure)).toMatch(/duplicate key/);
    });

    it('seals payload columns with a cipher, all or only sensitive tasks', async () => {
      const cipher = createPayloadCipher(parseKeyring(`k1:${randomBytes(32).toString('base64')}`));
      const schema = freshSchema();
      const all = open({ schema, cipher });
      const some = open({ schema, cipher, encrypt: 'sensitive' });
      const secret = await all.create(newTask({ args: { secret: 'swordfish' } }));
      const plain = await some.create(newTask({ args: { visible: 'yes' }, createdAt: T0 + 1 }));
      const sensitive = await some.create(
        newTask({ args: { hidden: 'x' }, createdAt: T0 + 2, sensitive: true }),
      );
      for (const store of [all, some, some]) {
        const run = await store.claim('w', 1_000, T0 + 10);
        if (run === undefined) throw new Error('expected a claim');
        await store.saveStep(run.id, run.token, 'step', { got: run.tool }, T0 + 10);
        await store.finish(run.id, run.token, { kind: 'completed', result: { echo: run.args } }, T0 + 11);
      }
      const rows = await admin.query<{ id: string; args: string; result: string }>(
        `SELECT t.id, t.args, t.result, s.value, t.status_message, t.client_caps
         FROM ${pg.escapeIdentifier(schema)}.tasks t
         JOIN ${pg.escapeIdentifier(schema)}.task_steps s ON s.task_id = t.id`,
      );
      const byId = new Map(rows.rows.map((r) => [r.id, r]));
      for (const id of [secret.id, sensitive.id]) {
        const row = byId.get(id);
        // Arguments, result, step, status message and client capabilities.
        expect(Object.values(row ?? {}).filter((v) => String(v).startsWith('enc2.k1.'))).toHaveLength(5);
      }
      expect(byId.get(plain.id)?.args).toBe('{"visible":"yes"}');
      expect(await some.get(sensitive.id, ALICE, T0 + 20)).toMatchObject({
        result: { echo: { hidden: 'x' } },
      });
      expect(await all.get(secret.id, ALICE, T0 + 20)).toMatchObject({
        result: { echo: { secret: 'swordfish' } },
      });
    });
  });
}
