// The operators' port on PostgreSQL: the shared TaskAdmin contract on a throwaway schema (a second instance plays
// another replica), and the plans of the searches an operator runs most.
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AdminTaskQuery } from '../../tasks/admin.js';
import { checkAdminQuery } from '../admin-query.js';
import { runTaskAdminContract } from '../task-admin.contract.js';
import { newTask } from '../task-store.contract.js';
import { migrate } from './migrations.js';
import { searchSql } from './sql/admin.js';
import { createPostgresTaskStore } from './task-store.js';
import { TEST_POSTGRES_URL as URL, withPostgres } from '../../../test/support/postgres.js';
import { usePostgresStores } from '../../../test/support/postgres-stores.js';

await withPostgres('the PostgreSQL operators’ port tests', defineSuites);

function defineSuites(): void {
  const { admin, open, freshSchema, schema: SCHEMA } = usePostgresStores('dmcp_admin');

  beforeAll(async () => {
    await migrate(admin, SCHEMA);
  });

  runTaskAdminContract({
    name: 'postgres',
    newStore: async () => {
      await admin.query(`TRUNCATE ${pg.escapeIdentifier(SCHEMA)}.tasks CASCADE`);
      return createPostgresTaskStore({ connectionString: URL, schema: SCHEMA, poolSize: 4 });
    },
    openPeer: () => createPostgresTaskStore({ connectionString: URL, schema: SCHEMA, poolSize: 4 }),
  });

  describe('PostgreSQL operators’ searches', () => {
    it('read a page in order from an index, without sorting (a few thousand analysed rows)', async () => {
      const schema = freshSchema();
      const store = open({ schema });
      const T0 = 1_700_000_000_000;
      for (let i = 0; i < 5_000; i += 500) {
        const batch = Array.from({ length: 500 }, (_, j) => {
          const n = i + j;
          // One tenant holds most tasks; a small one holds 1 in 100.
          const owner = { tenant: n % 100 === 0 ? 'small' : 'big', principal: `p${n % 50}` };
          return store.create(newTask({ createdAt: T0 + n, tool: `tool${n % 20}`, owner }));
        });
        await Promise.all(batch);
      }
      const s = pg.escapeIdentifier(schema);
      await admin.query(`ANALYZE ${s}.tasks`);
      const planOf = async (
        tenants: readonly string[] | undefined,
        query: AdminTaskQuery,
      ): Promise<string> => {
        const search = searchSql(s, tenants, checkAdminQuery(query));
        if (search === undefined) throw new Error('expected a statement');
        const { rows } = await admin.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${search.sql}`, search.params);
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      };
      const next = Buffer.from(JSON.stringify({ s: 'created', o: 'desc', t: T0 + 2_000, id: 'x' })).toString(
        'base64url',
      );
      const cases: [readonly string[] | undefined, AdminTaskQuery, string][] = [
        [undefined, { limit: 50 }, 'Index Scan Backward using tasks_created'],
        [undefined, { limit: 50, tool: 'tool3' }, 'Index Scan Backward using tasks_tool_created'],
        [['small'], { limit: 50 }, 'Index Scan Backward using tasks_tenant_created'],
        [undefined, { limit: 50, sort: 'updated' }, 'Index Scan Backward using tasks_updated'],
        // No task has failed: the outcome-unknown ones are found in their own (empty) index, not by a scan.
        [undefined, { limit: 50, errorOutcome: 'unknown' }, 'Index Scan Backward using tasks_error_outcomes'],
      ];
      for (const [tenants, query, index] of cases) {
        const plan = await planOf(tenants, query);
        expect(plan, JSON.stringify(query)).toContain(index);
        expect(plan, JSON.stringify(query)).not.toMatch(/\bSort\b/);
      }
      // A later page starts in the index at the cursor (with 100 rows left the planner may sort them instead).
      const later = await planOf(undefined, { limit: 50, tool: 'tool3', cursor: next });
      expect(later).toMatch(
        /tasks_tool_created[^\n]*\n\s+Index Cond: \(\(tool = 'tool3'::text\) AND \(ROW\(created_at, id\) </,
      );
    });
  });
}
