// task.rateLimit across replicas on one PostgreSQL schema (three store instances, each with its own worker): a 10/s
// limit holds within 10% over 30 s while tasks are created at 15/s; starts are read from the stored history.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, it } from 'vitest';
import { migrate } from '../../src/stores/postgres/migrations.js';
import { expectRateHeldAcrossReplicas } from '../support/rate-acceptance.js';
import { withPostgres } from '../support/postgres.js';
import { usePostgresStores } from '../support/postgres-stores.js';

await withPostgres('the PostgreSQL rate limit replica test', () => {
  const { admin, open, schema } = usePostgresStores('dmcp_rate');
  beforeAll(async () => {
    await migrate(admin, schema);
  });

  describe('rate limits across three replicas on one PostgreSQL schema', () => {
    it('hold 10 starts a second within 10% over 30 s', { timeout: 90_000 }, async () => {
      await expectRateHeldAcrossReplicas([open(), open(), open()], `charges-${randomUUID()}`);
    });
  });
});
