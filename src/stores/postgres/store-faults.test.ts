// The PostgreSQL store when the database is away: a wrong port, a statement timeout, killed connections, and a
// server gone silent (a black-holed network). Bounded waits, clean errors, and recovery.
import { randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../tasks/errors.js';
import type { TaskStore } from '../../tasks/store.js';
import type { TaskOwner } from '../../tasks/task.js';
import { newTask } from '../task-store.contract.js';
import { createPostgresTaskStore, type PostgresTaskStoreOptions } from './task-store.js';
import { TEST_POSTGRES_URL, withPostgres } from '../../../test/support/postgres.js';

const ALICE: TaskOwner = { tenant: 'acme', principal: 'alice' };
const T0 = 1_700_000_000_000;
const SCHEMA = `dmcp_faults_${randomBytes(5).toString('hex')}`;

/** A loopback proxy to PostgreSQL whose traffic can be frozen (bytes accepted, never delivered). */
async function startProxy(): Promise<{ url: string; freeze(): void; thaw(): void; close(): Promise<void> }> {
  const target = new URL(TEST_POSTGRES_URL);
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  let frozen = false;
  const wire = ({ client, upstream }: { client: Socket; upstream: Socket }): void => {
    client.pipe(upstream);
    upstream.pipe(client);
  };
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    const pair = { client, upstream };
    pairs.add(pair);
    for (const s of [client, upstream]) {
      s.on('error', () => undefined);
      s.on('close', () => {
        pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      });
    }
    if (!frozen) wire(pair);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const url = new URL(TEST_POSTGRES_URL);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    freeze() {
      frozen = true;
      for (const { client, upstream } of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    thaw() {
      frozen = false;
      for (const pair of pairs) {
        wire(pair);
        pair.client.resume();
        pair.upstream.resume();
      }
    },
    async close() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

await withPostgres('the PostgreSQL store under network faults', () => {
  const admin = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max: 3 });
  const opened: TaskStore[] = [];
  const open = (options: PostgresTaskStoreOptions = {}) => {
    const store = createPostgresTaskStore({
      connectionString: TEST_POSTGRES_URL,
      schema: SCHEMA,
      poolSize: 4,
      ...options,
    });
    opened.push(store);
    return store;
  };
  afterAll(async () => {
    for (const store of opened.splice(0)) await store.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(SCHEMA)} CASCADE`);
    await admin.end();
  });

  describe('PostgreSQL store behind a black-holed connection', () => {
    it('fails reads, writes and transactions within the client-side bounds, then recovers', async () => {
      const proxy = await startProxy();
      const store = createPostgresTaskStore({
        connectionString: proxy.url,
        schema: SCHEMA,
        poolSize: 2,
        statementTimeoutMs: 300,
        connectTimeoutMs: 400,
        listen: false,
      });
      try {
        const task = await store.create(newTask());
        // Two idle pooled connections (their next statement hangs) and room for none: new ones hang in start-up.
        proxy.freeze();
        const started = performance.now();
        const outcomes = await Promise.all(
          [
            store.get(task.id, ALICE, T0),
            store.create(newTask()),
            store.requestCancel(task.id, ALICE, T0),
            store.claim('w', 1_000, T0),
          ].map((p: Promise<unknown>) =>
            p.then(
              () => undefined,
              (e: unknown) => ({ e, ms: performance.now() - started }),
            ),
          ),
        );
        for (const o of outcomes) {
          expect(o?.e).toBeInstanceOf(StoreUnavailableError);
          expect((o?.e as Error).message).toMatch(/^Task store unavailable: /);
          // statement bound (300 + 1000 ms) plus a connect or pool wait (400 ms), with slack.
          expect(o?.ms).toBeLessThan(4_000);
        }
        proxy.thaw();
        // Hung connections were destroyed, not returned to the pool: the next calls work.
        const deadline = Date.now() + 5_000;
        let got: unknown;
        while (Date.now() < deadline) {
          got = await store.get(task.id, ALICE, T0).catch((e: unknown) => e);
          if (!(got instanceof Error)) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(got).toMatchObject({ id: task.id });
        expect(await store.requestCancel(task.id, ALICE, T0)).toMatchObject({ ok: true });
      } finally {
        await store.close();
        await proxy.close();
      }
    }, 20_000);
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
});
