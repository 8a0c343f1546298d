// Events from outside a task across two servers on one PostgreSQL schema: delivered to either, the task resumes on
// the one that runs it at once (a notification), and callback URLs, repeats, conflicts, forged and expired tokens,
// early events and timeouts behave as on one server (support/event-acceptance.ts).
import { beforeAll, describe, it } from 'vitest';
import { migrate } from '../../src/stores/postgres/migrations.js';
import { expectEventsAcrossReplicas } from '../support/event-acceptance.js';
import { withPostgres } from '../support/postgres.js';
import { usePostgresStores } from '../support/postgres-stores.js';

await withPostgres('the PostgreSQL events replica test', () => {
  const { admin, open, schema } = usePostgresStores('dmcp_events');
  beforeAll(async () => {
    await migrate(admin, schema);
  });

  describe('events from outside across two servers on one PostgreSQL schema', () => {
    it(
      'resume the task on the server that runs it, whichever server takes them',
      { timeout: 60_000 },
      async () => {
        await expectEventsAcrossReplicas(open(), open());
      },
    );
  });
});
