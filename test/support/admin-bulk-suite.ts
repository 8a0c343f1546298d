// Bulk changes through the operator API for every store: a dry run counts, a change applies to the tasks matching
// then, each by the single action's rules, within the operator's tenants, with the CSRF token and audit lines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminServer, waitUntil, type AdminServer, type Who } from './admin-api.js';

type Item = { id: string; tenant: string; status: string; tool: string; retryOf?: string };

export function defineAdminBulkSuite(name: string, storeArgs: (dir: string) => string[]): void {
  describe(name, () => {
    let server: AdminServer;
    const list = async (who: Who, query = ''): Promise<Item[]> =>
      (await server.api('GET', `/tasks?limit=500&${query}`, who)).body.items as Item[];
    const bulk = async (path: string, who: Who = 'root') => server.change('POST', `/bulk/${path}`, who);

    beforeAll(async () => {
      server = await startAdminServer(storeArgs);
      for (const [who, tool, n] of [
        ['alice', 'slow_job', 2],
        ['bob', 'slow_job', 1],
        ['alice', 'quick_job', 1],
        ['alice', 'flaky_steps', 1],
        ['bob', 'flaky_steps', 1],
      ] as const)
        for (let i = 0; i < n; i++) await server.create(who, tool, { run: `${who}-${tool}-${i}` });
      await waitUntil(async () => {
        const items = await list('root');
        const count = (s: string) => items.filter((t) => t.status === s).length;
        return count('failed') === 2 && count('completed') === 1 && count('working') === 3;
      }, 'the tasks to settle');
    }, 60_000);
    afterAll(async () => server?.close());

    it('refuses a bulk change without the operator role or the CSRF token, and a filter it does not know', async () => {
      expect((await server.api('POST', '/bulk/cancel', 'root')).body).toMatchObject({
        error: { code: 'csrf' },
      });
      expect((await server.change('POST', '/bulk/cancel', 'alice')).status).toBe(403);
      for (const query of ['limit=5', 'cursor=x', 'colour=blue', 'dryRun=yes', 'status=done'])
        expect((await bulk(`cancel?${query}`)).status, query).toBe(400);
      expect((await server.api('GET', '/bulk/cancel', 'root')).status).toBe(405);
      expect((await list('root', 'status=working')).length).toBe(3);
    });

    it('counts in a dry run, within the operator’s tenants, and changes nothing', async () => {
      expect((await bulk('cancel?status=working&dryRun=true', 'opsA')).body).toEqual({
        dryRun: true,
        matched: 2,
      });
      expect((await bulk('cancel?status=working&dryRun=true')).body).toEqual({ dryRun: true, matched: 3 });
      expect((await bulk('purge?tenant=B&dryRun=true', 'opsA')).body).toEqual({ dryRun: true, matched: 0 });
      expect((await list('root', 'status=working')).length).toBe(3);
    });

    it('cancels the matching tasks of the operator’s tenants only', async () => {
      expect((await bulk('cancel?tool=slow_job', 'opsA')).body).toEqual({ matched: 2, touched: 2 });
      await waitUntil(
        async () => (await list('root', 'tenant=A&status=cancelled')).length === 2,
        'the cancelled tasks to end',
      );
      expect((await list('root', 'tenant=B&status=working')).length).toBe(1);
      // Already finished: matched, not touched.
      expect((await bulk('cancel?tenant=A&tool=slow_job')).body).toEqual({
        matched: 2,
        touched: 0,
        skipped: { terminal: 2 },
      });
    });

    it('retries the failed tasks as new tasks, and purges only finished ones', async () => {
      const failed = (await list('root', 'status=failed')).map((t) => t.id).sort();
      expect((await bulk('retry?status=failed')).body).toEqual({ matched: 2, touched: 2 });
      const retries = (await list('root')).filter((t) => t.retryOf !== undefined);
      expect(retries.map((t) => t.retryOf).sort()).toEqual(failed);
      expect((await bulk('purge?tool=slow_job')).body).toEqual({
        matched: 3,
        touched: 2,
        skipped: { not_terminal: 1 },
      });
      expect((await list('root', 'tool=slow_job')).map((t) => t.tenant)).toEqual(['B']);
      // The audit lines are written as the answers go out: the last ones may reach stderr a moment after.
      const lines = (event: string, also = ''): string[] =>
        server.proc
          .stderr()
          .split('\n')
          .filter((l) => l.includes(`"event":"${event}"`) && l.includes(also));
      await waitUntil(
        async () =>
          lines('admin.purge', 'bulk/purge').length >= 3 && lines('admin.bulk', 'bulk/purge').length > 0,
        'the audit lines of the bulk purge',
      );
      const audit = lines('admin.bulk').map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(audit).toContainEqual(
        expect.objectContaining({ principal: 'ops-a', method: 'POST bulk/cancel', matched: 2, touched: 2 }),
      );
      expect(audit).toContainEqual(
        expect.objectContaining({ method: 'POST bulk/purge', matched: 3, touched: 2 }),
      );
      expect(lines('admin.purge', 'bulk/purge')).toHaveLength(3);
    });
  });
}
