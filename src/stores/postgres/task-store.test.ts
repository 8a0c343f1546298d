// The PostgreSQL store: the shared contract on a throwaway schema, plus what only several connections can show.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { StoreUnavailableError } from '../../tasks/errors.js';
import { createPayloadCipher, parseKeyring } from '../../tasks/payload-cipher.js';
import type { TaskChange, TaskStore } from '../../tasks/store.js';
import type { ClaimedTask, TaskOwner } from '../../tasks/task.js';
import {
  expectUpgradedTasksResume,
  newTask,
  runTaskStoreContract,
  seedUpgradeTasks,
} from '../task-store.contract.js';
import { migrate, postgresMigrations } from './migrations.js';
import { LISTEN_APPLICATION_NAME, schemaNames } from './names.js';
import { buildQueries } from './queries.js';
import { createPostgresTaskStore, type PostgresTaskStoreOptions } from './task-store.js';
import { withPostgres } from '../../../test/support/postgres.js';

const URL = process.env.DURABLE_MCP_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const T0 = 1_700_000_000_000;
const ALICE: TaskOwner = { tenant: 'acme', principal: 'alice' };
const SCHEMA = `dmcp_test_${randomBytes(5).toString('hex')}`;

await withPostgres('the PostgreSQL store tests', defineSuites);

function defineSuites(): void {
  const admin = new pg.Pool({ connectionString: URL, max: 3 });
  const schemas = new Set<string>([SCHEMA]);
  const opened: TaskStore[] = [];
  const open = (options: PostgresTaskStoreOptions = {}) => {
    const store = createPostgresTaskStore({ connectionString: URL, schema: SCHEMA, poolSize: 4, ...options });
    opened.push(store);
    return store;
  };
  const freshSchema = (): string => {
    const schema = `${SCHEMA}_${randomBytes(3).toString('hex')}`;
    schemas.add(schema);
    return schema;
  };

  beforeAll(async () => {
    await migrate(admin, SCHEMA);
  });
  afterAll(async () => {
    for (const store of opened.splice(0)) await store.close();
    for (const schema of schemas)
      await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
    await admin.end();
  });

  // Every contract test starts from empty tables in the file's schema.
  runTaskStoreContract({
    name: 'postgres',
    newStore: async () => {
      await admin.query(`TRUNCATE ${pg.escapeIdentifier(SCHEMA)}.tasks CASCADE`);
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
      });
    });

    it('migrates once when three instances start at the same time', async () => {
      const schema = freshSchema();
      const pools = [1, 2, 3].map(() => new pg.Pool({ connectionString: URL, max: 2 }));
      try {
        const applied = await Promise.all(pools.map((pool) => migrate(pool, schema)));
        expect(applied.flat().sort()).toEqual(postgresMigrations.map((m) => m.version));
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
        `SELECT t.id, t.args, t.result, s.value FROM ${pg.escapeIdentifier(schema)}.tasks t
         JOIN ${pg.escapeIdentifier(schema)}.task_steps s ON s.task_id = t.id`,
      );
      const byId = new Map(rows.rows.map((r) => [r.id, r]));
      for (const id of [secret.id, sensitive.id]) {
        const row = byId.get(id);
        expect(Object.values(row ?? {}).filter((v) => String(v).startsWith('enc1.k1.'))).toHaveLength(3);
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

  describe('PostgreSQL store when the database is away', () => {
    it('answers StoreUnavailableError for a wrong port, and does not crash', async () => {
      const store = open({ connectionString: 'postgres://postgres@127.0.0.1:1/test' });
      store.changes?.subscribe(() => undefined); // its LISTEN client keeps retrying in the background
      // All in flight at once: several operations start while the first (lazy) migration is still failing.
      const errors = await Promise.all(
        [
          store.create(newTask()),
          store.get('task_x', ALICE, T0),
          store.claim('w', 1_000, T0),
          store.answer('task_x', ALICE, {}, T0),
          store.countRunnable(T0),
        ].map((call: Promise<unknown>) =>
          call.then(
            () => undefined,
            (e: unknown) => e,
          ),
        ),
      );
      for (const err of errors) {
        expect(err).toBeInstanceOf(StoreUnavailableError);
        expect((err as Error).message).toMatch(/connection refused/);
        expect(err).not.toBeInstanceOf(pg.DatabaseError);
      }
      // A later call tries again (and fails the same way) rather than replaying a stale failure forever.
      await expect(store.renew('task_x', 1, 1_000, T0)).rejects.toThrow(/connection refused/);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await store.close();
      await expect(store.countRunnable(T0)).rejects.toThrow(/store is closed/);
    });

    it('sets the statement timeout on its connections, and reports one as StoreUnavailableError', async () => {
      const store = open({ statementTimeoutMs: 150 });
      const shown = await store.pool.query<{ statement_timeout: string }>('SHOW statement_timeout');
      expect(shown.rows[0]?.statement_timeout).toBe('150ms');
      const isolation = await store.pool.query<{ default_transaction_isolation: string }>(
        'SHOW default_transaction_isolation',
      );
      expect(isolation.rows[0]?.default_transaction_isolation).toBe('read committed');
      // Hold the row lock of a task so that the store's write must wait past its timeout.
      const task = await store.create(newTask());
      const blocker = await admin.connect();
      try {
        await blocker.query('BEGIN');
        await blocker.query(`SELECT 1 FROM ${pg.escapeIdentifier(SCHEMA)}.tasks WHERE id = $1 FOR UPDATE`, [
          task.id,
        ]);
        const err = await store.requestCancel(task.id, ALICE, T0).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(StoreUnavailableError);
        expect((err as Error).message).toMatch(/statement timeout/);
      } finally {
        await blocker.query('ROLLBACK');
        blocker.release();
      }
      expect(await store.requestCancel(task.id, ALICE, T0)).toMatchObject({ ok: true, cancelledNow: true });
    });

    it('recovers by itself when its connections are killed', async () => {
      const store = open();
      const pids = await Promise.all(
        [1, 2, 3].map(async () => {
          const client = await store.pool.connect();
          try {
            return (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
          } finally {
            client.release();
          }
        }),
      );
      expect(await store.countRunnable(T0)).toBeGreaterThanOrEqual(0);
      await admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) pid', [pids]);
      const outcomes: unknown[] = [];
      const count = await (async () => {
        for (let i = 0; i < 5; i++) {
          try {
            return await store.countRunnable(T0);
          } catch (err) {
            outcomes.push(err);
          }
        }
        throw new Error('never recovered');
      })();
      expect(count).toBeGreaterThanOrEqual(0);
      expect(outcomes.every((e) => e instanceof StoreUnavailableError)).toBe(true);
    });
  });
}
