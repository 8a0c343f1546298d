// The operator API on two replicas of one PostgreSQL schema: any replica serves any task, and the CSRF token one
// replica issues is accepted by the other (both derive it from the secret kept in the store).
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { startAdminServer, waitUntil, type AdminServer } from '../support/admin-api.js';
import { dropSchema, TEST_POSTGRES_URL, withPostgres } from '../support/postgres.js';

const SCHEMA = `dmcp_admin_replicas_${randomBytes(5).toString('hex')}`;

await withPostgres('the operator API on two replicas', () => {
  const servers: AdminServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.close();
    await dropSchema(SCHEMA);
  });

  describe('the operator API on two replicas', () => {
    it('cancels a task through either replica, with a CSRF token from the other', async () => {
      const args = () => ['--store', TEST_POSTGRES_URL, '--pg-schema', SCHEMA];
      const a = await startAdminServer(args);
      servers.push(a);
      const b = await startAdminServer(args);
      servers.push(b);
      const id = await a.create('alice', 'slow_job', { ms: 60_000 });
      const status = async (s: AdminServer) => (await s.api('GET', `/tasks/${id}`, 'root')).body.status;
      expect(await status(b)).toBe('working');
      const token = (await a.api('GET', '/session', 'root')).body.csrfToken as string;
      expect((await b.api('GET', '/session', 'root')).body.csrfToken).toBe(token);
      // Whichever replica runs it, a cancel through the other stops it.
      const cancelled = await b.api('POST', `/tasks/${id}/cancel`, 'root', { 'x-csrf-token': token });
      expect(cancelled.status).toBe(200);
      await waitUntil(async () => (await status(a)) === 'cancelled', 'the cancelled task', 30_000);
      const history = (await a.api('GET', `/tasks/${id}`, 'root')).body.history as { status: string }[];
      expect(history.map((h) => h.status)).toEqual(['working', 'cancelled']);
    }, 90_000);
  });
});
