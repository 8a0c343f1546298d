// `durable-mcp migrate --store …`: applies pending schema migrations and exits (for deployments that migrate apart).
import { openSqlite } from '../../stores/sqlite/database.js';
import { migratePostgres } from '../../stores/postgres/backend.js';
import { DEFAULT_SCHEMA } from '../../stores/postgres/names.js';
import { parseFlags, UsageError } from '../args.js';
import { isPostgresUrl, redactUrl } from '../store-config.js';

export const migrateUsage = `durable-mcp migrate --store PATH|postgres://… [--pg-schema NAME]
  Applies pending migrations (safe while other processes start or run) and prints what it did.`;

export async function migrate(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, { store: { type: 'string' }, 'pg-schema': { type: 'string' } });
  const target = values.store as string | undefined;
  if (target === undefined) throw new UsageError('migrate needs --store');
  if (isPostgresUrl(target)) {
    const schema = (values['pg-schema'] as string | undefined) ?? DEFAULT_SCHEMA;
    try {
      const applied = await migratePostgres({ connectionString: target, schema });
      console.log(
        `${redactUrl(target)} schema ${schema}: ${applied.length === 0 ? 'up to date' : `applied ${applied.join(', ')}`}`,
      );
    } catch (err) {
      console.error(`migrate: ${err instanceof Error ? err.message : String(err)}`);
      return 3;
    }
    return 0;
  }
  openSqlite({ path: target }).close();
  console.log(`${target}: up to date`);
  return 0;
}
