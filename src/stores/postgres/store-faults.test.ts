// The PostgreSQL store when the server goes silent (a black-holed network): bounded waits and clean errors.
import { randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../tasks/errors.js';
import type { TaskOwner } from '../../tasks/task.js';
import { newTask } from '../task-store.contract.js';
import { createPostgresTaskStore } from './task-store.js';
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
  const admin = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max: 2 });
  afterAll(async () => {
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
});
