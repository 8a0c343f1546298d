// Opens the backend named by --store: a SQLite file path or a postgres:// URL, with the shared requestState secret
// (DURABLE_MCP_STATE_SECRET, or the one stored in the backend).
import { readFileSync } from 'node:fs';
import { createSqliteBackend } from '../stores/sqlite/backend.js';
import type { Backend } from '../tasks/backend.js';
import type { PayloadCipher } from '../tasks/payload-cipher.js';

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

/**
 * The store a command names: `--store`, else `DURABLE_MCP_STORE`, else the first line of the file
 * `DURABLE_MCP_STORE_FILE` names (a mounted secret): a URL with a password need not be on the command line, where
 * `ps` shows it.
 */
export function storeFrom(flag: unknown, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (typeof flag === 'string') return flag;
  if (env.DURABLE_MCP_STORE !== undefined && env.DURABLE_MCP_STORE !== '') return env.DURABLE_MCP_STORE;
  const file = env.DURABLE_MCP_STORE_FILE;
  if (file === undefined || file === '') return undefined;
  const line = readFileSync(file, 'utf8').split('\n')[0]?.trim();
  if (line === undefined || line === '') throw new Error(`DURABLE_MCP_STORE_FILE ${file} holds no store`);
  return line;
}

export async function openBackend(flags: StoreFlags): Promise<Backend> {
  const shared = {
    cipher: flags.cipher,
    encrypt: flags.encrypt,
    // Empty counts as unset: an empty secret would seal nothing.
    stateSecret: process.env.DURABLE_MCP_STATE_SECRET || undefined,
    migrate: flags.migrate,
  };
  if (!isPostgresUrl(flags.store)) return createSqliteBackend({ path: flags.store, ...shared });
  const { createPostgresBackend } = await import('./postgres-store.js');
  return createPostgresBackend({
    connectionString: flags.store,
    schema: flags.pgSchema,
    poolSize: flags.pgPoolSize,
    statementTimeoutMs: flags.pgStatementTimeoutMs,
    preparedStatements: flags.pgPreparedStatements,
    ...shared,
  });
}
