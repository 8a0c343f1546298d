// The TaskAdmin contract: searches (every filter, the tenant scope, query errors) and the overview's counts.
import { describe, expect, it } from 'vitest';
import { AdminQueryError } from '../../tasks/admin.js';
import { ACME, adminOf, ALL, listed, seedFixture } from './admin-fixture.contract.js';
import { BOB, T0, type ContractStore } from './harness.contract.js';

export function adminSearchContract(h: ContractStore): void {
  describe('operators: search', () => {
    it('finds tasks by each filter, newest first, ties of none', async () => {
      const ids = await seedFixture(h);
      const list = (query = {}) => listed(h, ids, ALL, query);
      expect(await list()).toEqual(['t7', 't6', 't5', 't4', 't3', 't2', 't1']);
      expect(await list({ order: 'asc' })).toEqual(['t1', 't2', 't3', 't4', 't5', 't6', 't7']);
      expect(await list({ tenant: 'acme' })).toEqual(['t7', 't5', 't4', 't2', 't1']);
      expect(await list({ principal: 'alice' })).toEqual(['t7', 't6', 't4', 't3', 't1']);
      expect(await list({ tenant: 'acme', principal: 'bob' })).toEqual(['t5', 't2']);
      expect(await list({ tool: 'report' })).toEqual(['t5', 't4', 't3']);
      expect(await list({ toolVersion: 'v1' })).toEqual(['t7', 't6', 't5', 't3', 't1']);
      expect(await list({ status: ['failed', 'cancelled'] })).toEqual(['t4', 't3', 't2']);
      expect(await list({ status: ['input_required'] })).toEqual(['t7']);
      expect(await list({ status: [] })).toEqual([]);
      expect(await list({ createdFrom: T0 + 3, createdTo: T0 + 6 })).toEqual(['t5', 't4', 't3']);
      expect(await list({ updatedFrom: T0 + 100 })).toEqual(['t7', 't4', 't3', 't2', 't1']);
      expect(await list({ updatedFrom: T0 + 102, updatedTo: T0 + 104 })).toEqual(['t3', 't2']);
      expect(await list({ hasError: true })).toEqual(['t3', 't2']);
      expect(await list({ hasError: false })).toEqual(['t7', 't6', 't5', 't4', 't1']);
      expect(await list({ errorText: 'disk full' })).toEqual(['t2']);
      expect(await list({ errorText: 'TIMEOUT' })).toEqual(['t3']);
      expect(await list({ errorText: 'never listed' })).toEqual([]); // the error's data is not searched
      expect(await list({ tenant: 'acme', status: ['failed'], tool: 'echo' })).toEqual(['t2']);
      expect(await list({ sort: 'updated', order: 'asc' })).toEqual([
        't5',
        't6',
        't1',
        't2',
        't3',
        't4',
        't7',
      ]);
    });

    it('lists what a row shows: owner, tool, status, times, runs, the error without its data', async () => {
      const ids = await seedFixture(h);
      const page = await adminOf(h).list(ALL, { limit: 1, status: ['failed'], tenant: 'acme' }, h.t);
      expect(page.items).toEqual([
        {
          id: ids.t2,
          owner: BOB,
          tool: 'echo',
          toolVersion: 'v2',
          status: 'failed',
          outcome: 'failed',
          statusMessage: 'It broke.',
          createdAt: T0 + 2,
          updatedAt: T0 + 102,
          attempt: 1,
          retryOf: undefined,
          error: { code: -32603, message: 'Disk FULL on node 7' },
        },
      ]);
      const [working] = (await adminOf(h).list(ALL, { limit: 1, tool: 'report' }, h.t)).items;
      expect(working).toMatchObject({
        id: ids.t5,
        status: 'working',
        outcome: undefined,
        attempt: 0,
        error: undefined,
      });
    });

    it('never shows a tenant-scoped operator the tasks of other tenants', async () => {
      const ids = await seedFixture(h);
      expect(await listed(h, ids, ACME)).toEqual(['t7', 't5', 't4', 't2', 't1']);
      expect(await listed(h, ids, ACME, { tenant: 'globex' })).toEqual([]);
      expect(await listed(h, ids, ACME, { principal: 'alice' })).toEqual(['t7', 't4', 't1']);
      expect(await listed(h, ids, ACME, { tool: 'report', order: 'asc' })).toEqual(['t4', 't5']);
      expect(await listed(h, ids, { tenants: [] })).toEqual([]);
      expect(await listed(h, ids, { tenants: ['globex', 'acme'] }, { status: ['failed'] })).toEqual([
        't3',
        't2',
      ]);
    });

    it('refuses a limit out of range, an unknown status and a malformed or foreign cursor', async () => {
      await seedFixture(h);
      const admin = adminOf(h);
      for (const limit of [0, 501, 1.5, Number.NaN])
        await expect(admin.list(ALL, { limit }, h.t)).rejects.toBeInstanceOf(AdminQueryError);
      const status = ['lost'] as never;
      await expect(admin.list(ALL, { limit: 5, status }, h.t)).rejects.toBeInstanceOf(AdminQueryError);
      const b64 = (text: string) => Buffer.from(text).toString('base64url');
      for (const cursor of [
        'not a cursor!',
        b64('hello'),
        b64('{"s":"created","o":"desc"}'),
        b64('null'),
        '',
      ])
        await expect(admin.list(ALL, { limit: 5, cursor }, h.t)).rejects.toBeInstanceOf(AdminQueryError);
      const { next } = await admin.list(ALL, { limit: 2 }, h.t);
      expect(next).toBeDefined();
      await expect(admin.list(ALL, { limit: 2, cursor: next, sort: 'updated' }, h.t)).rejects.toThrow(
        AdminQueryError,
      );
      await expect(admin.list(ALL, { limit: 2, cursor: next, order: 'asc' }, h.t)).rejects.toThrow(/order/);
      expect((await admin.list(ALL, { limit: 2, cursor: next }, h.t)).items).toHaveLength(2);
    });
  });

  describe('operators: count', () => {
    it('counts what a search with the same filters finds, within the scope, up to a bound', async () => {
      const ids = await seedFixture(h);
      const admin = adminOf(h);
      const count = admin.count?.bind(admin);
      if (count === undefined) return; // optional: a count then pages the search
      const filters = [
        {},
        { tenant: 'acme' },
        { tenant: 'acme', principal: 'bob' },
        { tool: 'report', toolVersion: 'v1' },
        { status: ['failed', 'cancelled'] as const },
        { status: [] },
        { outcome: ['failed'] as const },
        { createdFrom: T0 + 3, createdTo: T0 + 6 },
        { updatedFrom: T0 + 102, updatedTo: T0 + 104 },
        { hasError: true },
        { errorText: 'disk full' },
      ];
      for (const scope of [ALL, ACME, { tenants: [] }])
        for (const filter of filters)
          expect([filter, await count(scope, filter, 100, h.t)]).toEqual([
            filter,
            (await listed(h, ids, scope, filter)).length,
          ]);
      expect(await count(ALL, {}, 3, h.t)).toBe(3);
      expect(await count(ALL, {}, 0, h.t)).toBe(0);
      await expect(count(ALL, { status: ['lost'] as never }, 10, h.t)).rejects.toBeInstanceOf(
        AdminQueryError,
      );
      await expect(count(ALL, {}, 2_000_000, h.t)).rejects.toBeInstanceOf(AdminQueryError);
    });
  });

  describe('operators: overview', () => {
    it('counts by status, by tool and version, in windows and the stuck ones, within the scope', async () => {
      await seedFixture(h);
      const admin = adminOf(h);
      const options = { windowsMs: [150, 1_000], stuckMs: 150 };
      const all = await admin.overview(ALL, T0 + 200, options);
      expect(all.byStatus).toEqual({ working: 2, input_required: 1, completed: 1, failed: 2, cancelled: 1 });
      expect(all.byOutcome).toEqual({ completed: 1, tool_error: 0, failed: 2, cancelled: 1 });
      expect(all.byTool).toEqual(
        expect.arrayContaining([
          { tool: 'echo', toolVersion: 'v1', status: 'working', count: 1 },
          { tool: 'echo', toolVersion: 'v1', status: 'input_required', count: 1 },
          { tool: 'echo', toolVersion: 'v1', status: 'completed', count: 1 },
          { tool: 'echo', toolVersion: 'v2', status: 'failed', count: 1 },
          { tool: 'report', toolVersion: 'v1', status: 'failed', count: 1 },
          { tool: 'report', toolVersion: 'v1', status: 'working', count: 1 },
          { tool: 'report', toolVersion: undefined, status: 'cancelled', count: 1 },
        ]),
      );
      expect(all.byTool).toHaveLength(7);
      expect(all.windows).toEqual([
        { windowMs: 150, created: 0, completed: 1, failed: 2, toolErrors: 0 },
        { windowMs: 1_000, created: 7, completed: 1, failed: 2, toolErrors: 0 },
      ]);
      // t5 and t6 have not changed since T0+5 and T0+6; t7 asked for input at T0+107.
      expect(all.stuck).toBe(2);

      const acme = await admin.overview(ACME, T0 + 200, options);
      expect(acme.byStatus).toEqual({ working: 1, input_required: 1, completed: 1, failed: 1, cancelled: 1 });
      expect(acme.byTool.reduce((n, row) => n + row.count, 0)).toBe(5);
      expect(acme.windows).toEqual([
        { windowMs: 150, created: 0, completed: 1, failed: 1, toolErrors: 0 },
        { windowMs: 1_000, created: 5, completed: 1, failed: 1, toolErrors: 0 },
      ]);
      expect(acme.stuck).toBe(1);
      const none = await admin.overview({ tenants: [] }, T0 + 200, options);
      expect(none.byStatus).toEqual({ working: 0, input_required: 0, completed: 0, failed: 0, cancelled: 0 });
      expect(none.byOutcome).toEqual({ completed: 0, tool_error: 0, failed: 0, cancelled: 0 });
      expect(none).toMatchObject({ byTool: [], stuck: 0 });
    });
  });
}
