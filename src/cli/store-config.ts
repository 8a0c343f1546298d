// Opens the backend named by --store: a SQLite file path or a postgres:// URL, with the shared requestState secret
// (DURABLE_MCP_STATE_SECRET, or the one stored in the backend).
import { createPostgresBackend, redactUrl } from '../stores/postgres/backend.js';
import { createSqliteBackend } from '../stores/sqlite/backend.js';
import type { Backend } from '../tasks/backend.js';
import type { PayloadCipher } from '../tasks/payload-cipher.js';

export { redactUrl };

export interface StoreFlags {
  store: string;
  pgSchema?: string;
  pgPoolSize?: number;
  pgStatementTimeoutMs?: number;
  pgPreparedStatements?: boolean;
  cipher?: PayloadCipher;
  encrypt?: 'all' | 'sensitive';
  /** False: apply no migration, and refuse a store that lacks one (they run apart, `durable-mcp migrate`). */
  migrate?: boolean;
}

export const isPostgresUrl = (s: string): boolean => /^postgres(ql)?:\/\//i.test(s);

export async function openBackend(flags: StoreFlags): Promise<Backend> {
  const shared = {
    cipher: flags.cipher,
    encrypt: flags.encrypt,
    stateSecret: process.env.DURABLE_MCP_STATE_SECRET,
    migrate: flags.migrate,
  };
  if (!isPostgresUrl(flags.store)) return createSqliteBackend({ path: flags.store, ...shared });
  return createPostgresBackend({
    connectionString: flags.store,
    schema: flags.pgSchema,
    poolSize: flags.pgPoolSize,
    statementTimeoutMs: flags.pgStatementTimeoutMs,
    preparedStatements: flags.pgPreparedStatements,
    ...shared,
  });
}
