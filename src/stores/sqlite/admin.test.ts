// The operators' port on SQLite: the shared TaskAdmin contract on a real file (a peer on the same file plays another
// process), and the plans of the searches an operator runs most.
import { describe, expect, it } from 'vitest';
import { sqliteFiles } from '../../../test/support/sqlite-files.js';
import type { AdminTaskQuery } from '../../tasks/admin.js';
import { checkAdminQuery } from '../admin-query.js';
import { runTaskAdminContract } from '../task-admin.contract.js';
import { newTask } from '../task-store.contract.js';
import { searchSql } from './sql/admin.js';

const { freshPath, open } = sqliteFiles('durable-mcp-admin-');

let path = '';
runTaskAdminContract({
  name: 'sqlite (file)',
  newStore: () => open((path = freshPath())),
  openPeer: () => open(path),
});

describe('SQLite operators’ searches', () => {
  it('read a page in order from an index, without sorting, on a table without statistics', async () => {
    const store = open(freshPath());
    const T0 = 1_700_000_000_000;
    for (let i = 0; i < 4_000; i += 500) {
      const batch = Array.from({ length: 500 }, (_, j) => {
        const n = i + j;
        const owner = { tenant: `t${n % 10}`, principal: `p${n % 50}` };
        return store.create(newTask({ createdAt: T0 + n, tool: `tool${n % 20}`, owner }));
      });
      await Promise.all(batch);
    }
    const planOf = (tenants: readonly string[] | undefined, query: AdminTaskQuery): string => {
      const search = searchSql(tenants, checkAdminQuery(query));
      if (search === undefined) throw new Error('expected a statement');
      const plan = store.db.prepare(`EXPLAIN QUERY PLAN ${search.sql}`).all(search.params) as {
        detail: string;
      }[];
      return plan.map((p) => p.detail).join(' | ');
    };
    const next = Buffer.from(JSON.stringify({ s: 'created', o: 'desc', t: T0 + 2_000, id: 'x' })).toString(
      'base64url',
    );
    const cases: [readonly string[] | undefined, AdminTaskQuery, string][] = [
      [undefined, { limit: 50 }, 'INDEX tasks_created'],
      [undefined, { limit: 50, tool: 'tool3' }, 'INDEX tasks_tool_created (tool=?)'],
      [
        undefined,
        { limit: 50, tool: 'tool3', cursor: next },
        'INDEX tasks_tool_created (tool=? AND (created_at,id)<(?,?))',
      ],
      [['t3'], { limit: 50 }, 'INDEX tasks_tenant_created (tenant=?)'],
      [undefined, { limit: 50, sort: 'updated' }, 'INDEX tasks_updated'],
      [undefined, { limit: 50, outcome: ['tool_error'] }, 'INDEX tasks_tool_errors'],
      [undefined, { limit: 50, errorOutcome: 'unknown' }, 'INDEX tasks_error_outcomes (error_outcome=?)'],
    ];
    for (const [tenants, query, index] of cases) {
      const plan = planOf(tenants, query);
      expect(plan, JSON.stringify(query)).toContain(index);
      expect(plan, JSON.stringify(query)).not.toContain('TEMP B-TREE');
    }
  });
});
