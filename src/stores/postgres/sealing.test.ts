// Sealing at rest in the PostgreSQL store (sealing.contract.ts), with raw access to its schema.
import pg from 'pg';
import { createPayloadCipher, parseKeyring } from '../../tasks/payload-cipher.js';
import { sealingContract } from '../sealing.contract.js';
import { withPostgres } from '../../../test/support/postgres.js';
import { usePostgresStores } from '../../../test/support/postgres-stores.js';

const TABLES = [
  'tasks',
  'task_steps',
  'task_inputs',
  'task_step_attempts',
  'sessions',
  'session_requests',
  'rate_limits',
  'task_stream_chunks',
];

await withPostgres('the PostgreSQL sealing tests', () => {
  const { admin, open, freshSchema } = usePostgresStores('dmcp_seal');
  sealingContract('postgres', {
    async open(keyring) {
      const schema = freshSchema();
      const q = pg.escapeIdentifier(schema);
      const cipher = createPayloadCipher(parseKeyring(keyring));
      const store = open({ schema, cipher });
      // The first statement migrates the schema.
      await store.countActive({ tenant: 't', principal: 'p' });
      const qualify = (sql: string): string =>
        sql.replace(new RegExp(`\\b(${TABLES.join('|')})\\b`, 'g'), `${q}.$1`);
      return {
        store,
        raw: {
          reopen: async () => open({ schema, cipher }),
          async exec(sql, params) {
            let n = 0;
            await admin.query(
              qualify(sql).replace(/\?/g, () => `$${++n}`),
              params,
            );
          },
          async dump() {
            const parts: string[] = [];
            for (const table of TABLES) {
              const { rows } = await admin.query<{ all: string | null }>(
                `SELECT string_agg(t::text, ' ') AS all FROM ${q}.${table} t`,
              );
              parts.push(rows[0]?.all ?? '');
            }
            return parts.join('\n');
          },
        },
      };
    },
  });
});
