// Public entry of `durable-mcp/postgres`: the PostgreSQL task store for several replicas.
export const POSTGRES_STORE_STATUS =
  'not available yet: the PostgreSQL store is planned; use the SQLite store' as const;

export function createPostgresTaskStore(): never {
  throw new Error(`durable-mcp/postgres: ${POSTGRES_STORE_STATUS}`);
}
