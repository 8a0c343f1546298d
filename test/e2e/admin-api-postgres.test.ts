// The operator API of `serve` on PostgreSQL (a fresh schema, dropped afterwards).
import { randomBytes } from 'node:crypto';
import { afterAll } from 'vitest';
import { defineAdminApiSuite } from '../support/admin-api-suite.js';
import { defineAdminBulkSuite } from '../support/admin-bulk-suite.js';
import { dropSchema, TEST_POSTGRES_URL, withPostgres } from '../support/postgres.js';

const SCHEMA = `dmcp_admin_api_${randomBytes(5).toString('hex')}`;
const BULK_SCHEMA = `dmcp_admin_bulk_${randomBytes(5).toString('hex')}`;

await withPostgres('the operator API on PostgreSQL', () => {
  defineAdminApiSuite('the operator API on PostgreSQL', () => [
    '--store',
    TEST_POSTGRES_URL,
    '--pg-schema',
    SCHEMA,
  ]);
  defineAdminBulkSuite('bulk changes on PostgreSQL', () => [
    '--store',
    TEST_POSTGRES_URL,
    '--pg-schema',
    BULK_SCHEMA,
  ]);
  afterAll(async () => {
    await dropSchema(SCHEMA);
    await dropSchema(BULK_SCHEMA);
  });
});
