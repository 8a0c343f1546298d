// Public entry of `durable-mcp/postgres`: the PostgreSQL task store for several replicas, and its migrations.
export { createPostgresTaskStore, type PostgresTaskStoreOptions } from './stores/postgres/task-store.js';
export { migrate, postgresMigrations, type PostgresMigration } from './stores/postgres/migrations.js';
export { DEFAULT_SCHEMA } from './stores/postgres/names.js';
export { getOrCreateMeta as getOrCreatePostgresMeta } from './stores/postgres/meta.js';
