// PostgreSQL for tests: the URL, a reachability probe, and the rule that CI must run these tests (never skip).
import pg from 'pg';
import { describe, it } from 'vitest';

import { TEST_POSTGRES_URL } from './postgres-url.js';

export { TEST_POSTGRES_URL };

/** Why PostgreSQL cannot be used, or undefined when it can. */
export async function postgresUnreachable(url = TEST_POSTGRES_URL): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (err) {
    return `PostgreSQL at ${url.replace(/:[^:@/]*@/, ':***@')} is unreachable (${String(err)})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Defines the suites when PostgreSQL is reachable. Otherwise: with CI=true a failing test (these tests must run in
 * CI), elsewhere a skipped suite and a printed reason.
 */
export async function withPostgres(name: string, define: () => void, url = TEST_POSTGRES_URL): Promise<void> {
  const reason = await postgresUnreachable(url);
  if (reason === undefined) {
    define();
    return;
  }
  if (process.env.CI === 'true') {
    describe(name, () => {
      it('needs a reachable PostgreSQL in CI', () => {
        throw new Error(`${reason}; set DURABLE_MCP_TEST_POSTGRES_URL`);
      });
    });
    return;
  }
  console.warn(`skipping ${name}: ${reason}`);
  describe.skip(`${name} (needs PostgreSQL)`, () => {
    it('runs against PostgreSQL', () => undefined);
  });
}

/** Drops a schema a test made (and everything in it), if it is there. */
export async function dropSchema(schema: string, url = TEST_POSTGRES_URL): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
  } finally {
    await client.end();
  }
}
