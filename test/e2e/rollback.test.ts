// Rolling back: this release started on a store that a newer release migrated (a migration it does not know). It
// serves, with a warning naming the newer migrations, when they keep older releases working (the rule for
// migrations); it refuses to start, naming them, when the newer release marked its schema unservable for older
// ones (server_meta serve_min_migration); `migrate --check` says the same. On SQLite and on PostgreSQL.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresMigrations } from '../../src/advanced.js';
import { migrations as sqliteMigrations } from '../../src/stores/sqlite/migrations/index.js';
import { BIN, killedAfterEach, serveFails, startServe } from '../support/cli.js';
import { dropSchema, TEST_POSTGRES_URL, withPostgres } from '../support/postgres.js';
import { startTask, waitForTask } from '../support/task-calls.js';

const TOOLS = fileURLToPath(new URL('../fixtures/tools/replica-tools.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-rollback-'));
const env = { DURABLE_MCP_TEST_LOG: join(dir, 'runs.log') };
const procs = killedAfterEach();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });

/** A store as a newer release left it: its migrations, one more this release does not know, maybe a floor. */
interface Newer {
  /** Records migration `version` as applied, as the newer release did. */
  addMigration(version: number): Promise<void>;
  /** Marks the store unservable for releases before `version`, as a newer migration may. */
  raiseFloor(version: number): Promise<void>;
}

/** Serves the store this release cannot fully know: it runs a task to the end and warns about the newer migration. */
async function servesWithWarning(args: string[], future: number): Promise<void> {
  const server = await startServe(['--port', '0', '--tools', TOOLS, ...args], 30_000, env);
  procs.push(server);
  const taskId = await startTask(server.url, 'memo_job', { ms: 10 });
  expect((await waitForTask(server.url, taskId, ['completed', 'failed'])).status).toBe('completed');
  const warning = server
    .stderr()
    .split('\n')
    .find((l) => l.includes('"newerMigrations"'));
  expect(JSON.parse(warning ?? '{}')).toMatchObject({ level: 40, newerMigrations: [future] });
}

function rollbackSuite(name: string, known: number, storeArgs: string[], store: Newer, where: string): void {
  const future = known + 1;

  it(`${name}: serves a store with a newer release's migration, warning; refuses one marked unservable`, async () => {
    expect(cli('migrate', ...storeArgs).status).toBe(0);
    await store.addMigration(future);

    // Both with migrations at start (SQLite's usual way) and with --no-migrate (migrated apart).
    await servesWithWarning(storeArgs, future);
    await servesWithWarning([...storeArgs, '--no-migrate'], future);
    const check = cli('migrate', ...storeArgs, '--check');
    expect(check.status).toBe(0);
    expect(check.stdout.trim()).toMatch(new RegExp(`: up to date \\(and ${future} of a newer release\\)$`));

    await store.raiseFloor(future);
    for (const extra of [[], ['--no-migrate']]) {
      const refused = await serveFails([...storeArgs, ...extra]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`${where} was migrated by a newer release (migrations ${future})`);
      expect(refused.stderr).toContain(`knows migrations up to ${known}`);
    }
    const refusedCheck = cli('migrate', ...storeArgs, '--check');
    expect(refusedCheck.status).toBe(1);
    expect(refusedCheck.stderr).toContain('restore the backup taken before the upgrade');
    expect(cli('migrate', ...storeArgs).status).toBe(3);
  }, 90_000);
}

describe('rolling back, SQLite', () => {
  const file = join(dir, 'tasks.db');
  const write = (sql: string, ...params: unknown[]): Promise<void> => {
    const db = new Database(file);
    try {
      db.prepare(sql).run(...params);
    } finally {
      db.close();
    }
    return Promise.resolve();
  };
  rollbackSuite(
    'SQLite',
    Math.max(...sqliteMigrations.map((m) => m.version)),
    ['--store', file],
    {
      addMigration: (v) =>
        write(
          `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future', '2030-01-01')`,
          v,
        ),
      raiseFloor: (v) =>
        write(`INSERT INTO server_meta (key, value) VALUES ('serve_min_migration', ?)`, String(v)),
    },
    file,
  );
});

await withPostgres('rolling back, PostgreSQL', () => {
  describe('rolling back, PostgreSQL', () => {
    const schema = `dmcp_rollback_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max: 1 });
    afterAll(async () => {
      await dropSchema(schema);
      await admin.end();
    });
    rollbackSuite(
      'PostgreSQL',
      Math.max(...postgresMigrations.map((m) => m.version)),
      ['--store', TEST_POSTGRES_URL, '--pg-schema', schema],
      {
        addMigration: async (v) => {
          await admin.query(`INSERT INTO ${schema}.schema_migrations (version, name) VALUES ($1, 'future')`, [
            v,
          ]);
        },
        raiseFloor: async (v) => {
          await admin.query(
            `INSERT INTO ${schema}.server_meta (key, value) VALUES ('serve_min_migration', $1)`,
            [String(v)],
          );
        },
      },
      `schema "${schema}"`,
    );
  });
});
