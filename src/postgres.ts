/**
 * Public entry of `durable-mcp/postgres`: the PostgreSQL backend for several replicas, and its migrations.
 * Its types do not name the `pg` driver's, so type-checking it needs no `@types/pg`.
 *
 * @module durable-mcp/postgres
 */
export { createPostgresBackend, migratePostgres, redactUrl } from './stores/postgres/backend.js';
export type {
  PostgresBackendOptions,
  PostgresPool,
  MigratePostgresOptions,
} from './stores/postgres/backend.js';
export { DEFAULT_SCHEMA } from './stores/postgres/names.js';
