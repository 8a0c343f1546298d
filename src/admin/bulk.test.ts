// A bulk change's walk over the matching tasks: page by page, up to its bound, each task by the single action.
import { describe, expect, it } from 'vitest';
import type { AdminTaskQuery, AdminTaskSummary, TaskAdmin } from '../tasks/admin.js';
import { runBulk } from './bulk.js';

/** A store of `n` tasks (ids t0…), the odd ones finished; it keeps the queries it was asked. */
function fakeStore(n: number) {
  const queries: AdminTaskQuery[] = [];
  const cancelled: string[] = [];
  const ids = Array.from({ length: n }, (_, i) => `t${i}`);
  const store = {
    async list(_scope, query) {
      queries.push(query);
      const from = query.cursor === undefined ? 0 : Number(query.cursor);
      const items = ids.slice(from, from + query.limit).map((id) => ({ id }) as AdminTaskSummary);
      const end = from + items.length;
      return end < ids.length ? { items, next: String(end) } : { items };
    },
    async cancel(_scope, id) {
      if (Number(id.slice(1)) % 2 === 1) return { ok: false, reason: 'terminal' };
      cancelled.push(id);
      return { ok: true };
    },
  } as Pick<TaskAdmin, 'list' | 'cancel'> as TaskAdmin;
  return { store, queries, cancelled };
}

const base = { scope: { tenants: 'all' as const }, who: { tenant: 'ops', principal: 'root' }, now: 1_000 };

describe('a bulk change', () => {
  it('counts in a dry run without changing anything, newest first, tasks created later left out', async () => {
    const { store, queries, cancelled } = fakeStore(1_200);
    const answer = await runBulk({ ...base, store, action: 'cancel', filter: { tool: 'x' }, dryRun: true });
    expect(answer).toEqual({ dryRun: true, matched: 1_200 });
    expect(cancelled).toEqual([]);
    expect(queries.map((q) => q.limit)).toEqual([500, 500, 500]);
    expect(queries[0]).toMatchObject({ tool: 'x', sort: 'created', order: 'desc', createdTo: 1_001 });
  });

  it('counts in a dry run with one count of the store when it has one, over the same filter, up to its bound', async () => {
    const { store, queries } = fakeStore(1_200);
    const counts: unknown[][] = [];
    const counting: TaskAdmin = {
      ...store,
      async count(scope, filter, max, now) {
        counts.push([scope, filter, max, now]);
        return Math.min(1_200, max);
      },
    };
    const answer = await runBulk({
      ...base,
      store: counting,
      action: 'cancel',
      filter: { tool: 'x' },
      dryRun: true,
    });
    expect(answer).toEqual({ dryRun: true, matched: 1_200 });
    expect(queries).toEqual([]);
    expect(counts).toEqual([[base.scope, { tool: 'x', createdTo: 1_001 }, 10_001, 1_000]]);
    const bounded = await runBulk({
      ...base,
      store: counting,
      action: 'cancel',
      filter: {},
      dryRun: true,
      max: 7,
    });
    expect(bounded).toEqual({ dryRun: true, matched: 7, limited: true });
    expect(counts[1]?.[2]).toBe(8);
    // Changes still go task by task, through the search.
    await runBulk({ ...base, store: counting, action: 'cancel', filter: {}, dryRun: false, max: 1 });
    expect(queries).toHaveLength(1);
  });

  it('applies each task’s own action, counts those left, and stops at its bound', async () => {
    const { store, cancelled } = fakeStore(10);
    const all = await runBulk({ ...base, store, action: 'cancel', filter: {}, dryRun: false });
    expect(all).toEqual({ matched: 10, touched: 5, skipped: { terminal: 5 } });
    expect(cancelled).toEqual(['t0', 't2', 't4', 't6', 't8']);
    const some = fakeStore(10);
    const bounded = await runBulk({
      ...base,
      store: some.store,
      action: 'cancel',
      filter: {},
      dryRun: false,
      max: 4,
    });
    expect(bounded).toEqual({ matched: 4, touched: 2, skipped: { terminal: 2 }, limited: true });
    expect(
      await runBulk({ ...base, store: some.store, action: 'cancel', filter: {}, dryRun: true, max: 10 }),
    ).toEqual({ dryRun: true, matched: 10 });
  });
});
