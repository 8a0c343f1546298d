// `durable-mcp migrate --store …`: applies pending schema migrations and exits (for deployments that migrate apart);
// `--check` only reports, and with `--wait` waits (bounded) until another process has applied them.
import { openSqlite, readSqliteSchemaState } from '../../stores/sqlite/database.js';
import { migrations as sqliteMigrations } from '../../stores/sqlite/migrations/index.js';
import { schemaFit, type SchemaFit } from '../../stores/schema-fit.js';
import { parseFlags, UsageError } from '../args.js';
import { parseDuration } from '../durations.js';
import { isPostgresUrl, storeFrom } from '../store-config.js';
import { printErr, printOut } from '../terminal-text.js';
import { isUnreachable } from './serve-store.js';

export const migrateUsage = `durable-mcp migrate --store PATH|postgres://… [--pg-schema NAME] [--check [--wait DURATION]]
  The store may come from DURABLE_MCP_STORE or the file DURABLE_MCP_STORE_FILE names instead of --store.
  Applies pending migrations (safe while other processes start or run) and prints the store, the schema and what
  it did. --check applies nothing: it lists what is pending and exits 1 if anything is (0 when up to date).
  --wait DURATION (with --check; e.g. 600000 or 10m): checks again every 2 s while anything is pending or the store
  does not answer, up to DURATION; exits 0 once up to date, 1 if still pending then (a Kubernetes init container).
  A store that a newer release migrated beyond what this release can serve is refused (exit 1 with --check, else 3).`;

/** How often --wait looks again. */
const WAIT_STEP_MS = 2_000;

const listed = (versions: number[], verb: string): string =>
  versions.length === 0 ? 'up to date' : `${verb} ${versions.join(', ')}`;

/** What a store's schema holds, judged against this release. */
interface SchemaReport {
  where: string;
  pending: number[];
  fit: SchemaFit;
}

/** " (and 18, 19 of a newer release)" when the store has migrations this release does not know. */
const newerNote = (fit: SchemaFit): string =>
  fit.ok && fit.newer.length > 0 ? ` (and ${fit.newer.join(', ')} of a newer release)` : '';

function judge(where: string, known: number[], state: { applied: number[]; floor?: string }): SchemaReport {
  const done = new Set(state.applied);
  const pending = known.filter((v) => !done.has(v));
  return { where, pending, fit: schemaFit(where, known, state.applied, state.floor) };
}

/** `schema` undefined: the PostgreSQL store's default schema (a SQLite file has none). */
async function inspect(target: string, schema: string | undefined): Promise<SchemaReport> {
  if (!isPostgresUrl(target))
    return judge(target, versionsOf(sqliteMigrations), readSqliteSchemaState(target));
  const postgres = await import('../postgres-store.js');
  const named = schema ?? postgres.DEFAULT_SCHEMA;
  const state = await postgres.readPostgresSchemaState(target, named);
  return judge(postgres.postgresWhere(target, named), versionsOf(postgres.postgresMigrations), state);
}

const versionsOf = (list: readonly { version: number }[]): number[] => list.map((m) => m.version);

export async function migrate(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, {
    store: { type: 'string' },
    'pg-schema': { type: 'string' },
    check: { type: 'boolean' },
    wait: { type: 'string' },
  });
  const target = storeFrom(values.store);
  if (target === undefined)
    throw new UsageError('migrate needs --store (or DURABLE_MCP_STORE, or DURABLE_MCP_STORE_FILE)');
  const waitMs = values.wait === undefined ? 0 : parseDuration(values.wait as string);
  if (waitMs === undefined) throw new UsageError('--wait takes a duration: 600000, 90s, 10m');
  if (waitMs > 0 && values.check !== true) throw new UsageError('--wait goes with --check');
  const schema = values['pg-schema'] as string | undefined;
  try {
    if (values.check === true) return await check(target, schema, waitMs);
    return await apply(target, schema);
  } catch (err) {
    printErr(`migrate: ${err instanceof Error ? err.message : String(err)}`);
    return 3;
  }
}

/** Applies what is pending, then reports; a store this release cannot serve is an error. */
async function apply(target: string, schema: string | undefined): Promise<number> {
  let applied: number[];
  if (isPostgresUrl(target)) {
    const { migratePostgres } = await import('../postgres-store.js');
    applied = await migratePostgres({ connectionString: target, schema });
  } else {
    applied = (await inspect(target, schema)).pending;
    openSqlite({ path: target }).close();
  }
  const after = await inspect(target, schema);
  if (!after.fit.ok) throw new Error(after.fit.reason);
  printOut(`${after.where}: ${listed(applied, 'applied')}${newerNote(after.fit)}`);
  return 0;
}

/** --check: what is pending, and exit 1 if anything is; with --wait, looks again until it is done or time is up. */
async function check(target: string, schema: string | undefined, waitMs: number): Promise<number> {
  const end = Date.now() + waitMs;
  let said = '';
  for (;;) {
    const report = await inspect(target, schema).catch((err: unknown) => {
      if (!isUnreachable(err) || Date.now() >= end) throw err;
      return err.reason;
    });
    if (typeof report !== 'string') {
      if (!report.fit.ok) {
        printErr(`migrate: ${report.fit.reason}`);
        return 1;
      }
      const line = `${report.where}: ${listed(report.pending, 'pending')}${newerNote(report.fit)}`;
      if (report.pending.length === 0 || Date.now() >= end) {
        printOut(line);
        return report.pending.length === 0 ? 0 : 1;
      }
      if (line !== said) printOut(`${line}; waiting for them to be applied`);
      said = line;
    } else if (report !== said) {
      printErr(`migrate: the store does not answer (${report}); trying again`);
      said = report;
    }
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(WAIT_STEP_MS, Math.max(0, end - Date.now()))),
    );
  }
}
