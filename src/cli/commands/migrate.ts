// `durable-mcp migrate --store …`: applies pending schema migrations and exits (for deployments that migrate apart).
import pg from 'pg';
import { openSqlite, pendingSqliteMigrations } from '../../stores/sqlite/database.js';
import { pendingMigrations } from '../../stores/postgres/migrations.js';
import { migratePostgres } from '../../stores/postgres/backend.js';
import { DEFAULT_SCHEMA } from '../../stores/postgres/names.js';
import { parseFlags, UsageError } from '../args.js';
import { isPostgresUrl, redactUrl, storeFrom } from '../store-config.js';
import { printErr, printOut } from '../terminal-text.js';

export const migrateUsage = `durable-mcp migrate --store PATH|postgres://… [--pg-schema NAME] [--check]
  The store may come from DURABLE_MCP_STORE or the file DURABLE_MCP_STORE_FILE names instead of --store.
  Applies pending migrations (safe while other processes start or run) and prints the store, the schema and what
  it did. --check applies nothing: it lists what is pending and exits 1 if anything is (0 when up to date).`;

const listed = (versions: number[], verb: string): string =>
  versions.length === 0 ? 'up to date' : `${verb} ${versions.join(', ')}`;

export async function migrate(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, {
    store: { type: 'string' },
    'pg-schema': { type: 'string' },
    check: { type: 'boolean' },
  });
  const target = storeFrom(values.store);
  if (target === undefined)
    throw new UsageError('migrate needs --store (or DURABLE_MCP_STORE, or DURABLE_MCP_STORE_FILE)');
  const check = values.check === true;
  try {
    if (isPostgresUrl(target)) {
      const schema = (values['pg-schema'] as string | undefined) ?? DEFAULT_SCHEMA;
      const where = `${redactUrl(target)} schema ${schema}`;
      if (check) return report(where, await pendingPostgres(target, schema));
      const applied = await migratePostgres({ connectionString: target, schema });
      printOut(`${where}: ${listed(applied, 'applied')}`);
      return 0;
    }
    const pending = pendingSqliteMigrations(target);
    if (check) return report(target, pending);
    openSqlite({ path: target }).close();
    printOut(`${target}: ${listed(pending, 'applied')}`);
    return 0;
  } catch (err) {
    printErr(`migrate: ${err instanceof Error ? err.message : String(err)}`);
    return 3;
  }
}

/** --check: what is pending, and exit 1 if anything is. */
function report(where: string, pending: number[]): number {
  printOut(`${where}: ${listed(pending, 'pending')}`);
  return pending.length === 0 ? 0 : 1;
}

async function pendingPostgres(connectionString: string, schema: string): Promise<number[]> {
  const pool = new pg.Pool({ connectionString, max: 1 });
  try {
    return await pendingMigrations(pool, schema);
  } finally {
    await pool.end();
  }
}
