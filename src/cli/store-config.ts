// Opens the store named by --store: a SQLite file path or a postgres:// URL; plus the shared requestState secret.
import { randomBytes } from 'node:crypto';
import { getOrCreateMeta } from '../stores/sqlite/database.js';
import { createSqliteTaskStore } from '../stores/sqlite/task-store.js';
import { createPostgresTaskStore } from '../stores/postgres/task-store.js';
import { getOrCreateMeta as getOrCreatePostgresMeta } from '../stores/postgres/meta.js';
import type { PayloadCipher } from '../tasks/payload-cipher.js';
import type { TaskStore } from '../tasks/store.js';

export interface StoreFlags {
  store: string;
  pgSchema?: string;
  pgPoolSize?: number;
  pgStatementTimeoutMs?: number;
  pgPreparedStatements?: boolean;
  cipher?: PayloadCipher;
  encrypt?: 'all' | 'sensitive';
}

export const isPostgresUrl = (s: string): boolean => /^postgres(ql)?:\/\//i.test(s);

/** Hides the password of a connection string for logs. */
export const redactUrl = (s: string): string => s.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');

export async function openStore(
  flags: StoreFlags,
): Promise<{ store: TaskStore; stateSecret: string; describe: string }> {
  const fresh = (): string => randomBytes(32).toString('base64');
  if (isPostgresUrl(flags.store)) {
    const store = createPostgresTaskStore({
      connectionString: flags.store,
      schema: flags.pgSchema,
      poolSize: flags.pgPoolSize,
      statementTimeoutMs: flags.pgStatementTimeoutMs,
      preparedStatements: flags.pgPreparedStatements,
      cipher: flags.cipher,
      encrypt: flags.encrypt,
    });
    try {
      const secret =
        process.env.DURABLE_MCP_STATE_SECRET ??
        (await getOrCreatePostgresMeta(store.pool, flags.pgSchema, 'request_state_secret', fresh));
      return {
        store,
        stateSecret: secret,
        describe: `PostgreSQL ${redactUrl(flags.store)} schema ${flags.pgSchema ?? 'durable_mcp'}`,
      };
    } catch (err) {
      await store.close();
      throw err;
    }
  }
  const store = createSqliteTaskStore({ path: flags.store, cipher: flags.cipher, encrypt: flags.encrypt });
  const secret =
    process.env.DURABLE_MCP_STATE_SECRET ?? getOrCreateMeta(store.db, 'request_state_secret', fresh);
  return { store, stateSecret: secret, describe: `SQLite ${flags.store}` };
}
