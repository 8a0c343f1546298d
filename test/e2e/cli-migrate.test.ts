// Migrations apart from start-up: `durable-mcp migrate` prints the store, the schema and what it applied; `--check`
// applies nothing and exits 1 while anything is pending (with `--wait`, once time is up); `serve --no-migrate` refuses a store that lacks a migration,
// naming it, and runs with a PostgreSQL role that has no DDL rights; a server that must migrate without them says
// which privilege is missing.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresMigrations } from '../../src/advanced.js';
import { migrations as sqliteMigrations } from '../../src/stores/sqlite/migrations/index.js';
import { BIN, killedAfterEach, serveFails, startServe } from '../support/cli.js';
import { TEST_POSTGRES_URL, withPostgres } from '../support/postgres.js';

const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-migrate-'));
const procs = killedAfterEach();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });

const versions = (list: readonly { version: number }[]): string => list.map((m) => m.version).join(', ');

describe('migrations apart, SQLite', () => {
  it('--check lists what is pending; migrate applies it and says so; serve --no-migrate waits for it', async () => {
    const file = join(dir, 'tasks.db');
    const before = cli('migrate', '--store', file, '--check');
    expect(before.status).toBe(1);
    expect(before.stdout.trim()).toBe(`${file}: pending ${versions(sqliteMigrations)}`);
    const refused = await serveFails(['--store', file, '--no-migrate']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('lacks migrations 1, 2');
    expect(refused.stderr).toContain('durable-mcp migrate');
    const applied = cli('migrate', '--store', file);
    expect(applied.status).toBe(0);
    expect(applied.stdout.trim()).toBe(`${file}: applied ${versions(sqliteMigrations)}`);
    expect(cli('migrate', '--store', file).stdout.trim()).toBe(`${file}: up to date`);
    const after = cli('migrate', '--store', file, '--check');
    expect(after.status).toBe(0);
    expect(after.stdout.trim()).toBe(`${file}: up to date`);
    procs.push(await startServe(['--port', '0', '--store', file, '--no-migrate']));
  });

  it('--check --wait waits until another process has applied what is pending, and gives up when time is up', async () => {
    const file = join(dir, 'waited.db');
    const child = spawn(process.execPath, [BIN, 'migrate', '--store', file, '--check', '--wait', '60s'], {
      stdio: 'pipe',
    });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const end = Date.now() + 20_000;
    while (!stdout.includes('waiting for them to be applied') && Date.now() < end)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stdout).toContain(
      `${file}: pending ${versions(sqliteMigrations)}; waiting for them to be applied`,
    );
    expect(child.exitCode).toBeNull();
    expect(cli('migrate', '--store', file).status).toBe(0);
    expect(await exited).toBe(0);
    expect(stdout.trim().split('\n').at(-1)).toBe(`${file}: up to date`);

    const never = join(dir, 'never.db');
    const started = Date.now();
    const gaveUp = cli('migrate', '--store', never, '--check', '--wait', '1s');
    expect(gaveUp.status).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(gaveUp.stdout.trim().split('\n').at(-1)).toBe(`${never}: pending ${versions(sqliteMigrations)}`);
    expect(cli('migrate', '--store', never, '--wait', '1s').status).toBe(2);
  }, 60_000);

  it('takes the store from DURABLE_MCP_STORE, or from the file DURABLE_MCP_STORE_FILE names, instead of --store', () => {
    const file = join(dir, 'from-env.db');
    const run = (env: Record<string, string>) =>
      spawnSync(process.execPath, [BIN, 'migrate', '--check'], {
        encoding: 'utf8',
        env: { ...process.env, ...env },
      });
    expect(run({ DURABLE_MCP_STORE: file }).stdout).toContain(`${file}: pending 1, 2`);
    const secret = join(dir, 'store-url');
    writeFileSync(secret, `${file}\n`);
    expect(run({ DURABLE_MCP_STORE_FILE: secret }).stdout).toContain(`${file}: pending 1, 2`);
    const none = spawnSync(process.execPath, [BIN, 'migrate'], {
      encoding: 'utf8',
      env: { ...process.env, DURABLE_MCP_STORE: '', DURABLE_MCP_STORE_FILE: '' },
    });
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('DURABLE_MCP_STORE');
  });
});

await withPostgres('migrations apart, PostgreSQL', () => {
  describe('migrations apart, PostgreSQL', () => {
    const schema = `dmcp_migrate_${randomBytes(4).toString('hex')}`;
    const role = `dmcp_runtime_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max: 1 });
    const asRole = (): string => {
      const url = new URL(TEST_POSTGRES_URL);
      url.username = role;
      url.password = '';
      return url.toString();
    };
    afterAll(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    });

    it('a runtime role without DDL rights serves after a separate migrate, and is told what it lacks otherwise', async () => {
      const store = TEST_POSTGRES_URL;
      const check = cli('migrate', '--store', store, '--pg-schema', schema, '--check');
      expect(check.status).toBe(1);
      expect(check.stdout).toContain(`schema ${schema}: pending ${versions(postgresMigrations)}`);
      const refused = await serveFails(['--store', store, '--pg-schema', schema, '--no-migrate']);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain(`schema "${schema}" lacks migrations 1, 2`);
      const applied = cli('migrate', '--store', store, '--pg-schema', schema);
      expect(applied.status).toBe(0);
      expect(applied.stdout).toContain(`schema ${schema}: applied ${versions(postgresMigrations)}`);

      await admin.query(`CREATE ROLE ${role} LOGIN`);
      await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`);
      await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
      const runtime = await startServe([
        '--port',
        '0',
        '--store',
        asRole(),
        '--pg-schema',
        schema,
        '--no-migrate',
      ]);
      procs.push(runtime);
      expect((await fetch(runtime.url.replace('/mcp', '/healthz'))).status).toBe(200);

      // The same role, left to migrate at start: the error names the missing right and the way out.
      const migrating = await serveFails(['--store', asRole(), '--pg-schema', schema]);
      expect(migrating.code).not.toBe(0);
      expect(migrating.stderr).toContain(`cannot migrate schema "${schema}"`);
      expect(migrating.stderr).toContain('--no-migrate');
    });
  });
});
