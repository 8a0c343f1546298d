// The store contract as the author of another backend runs it: `durable-mcp/testing/contract` from the packed package
// (a fresh clone of HEAD, `npm pack`), installed with npm into a project of its own beside Vitest, its test files
// plain JavaScript as a backend's would be, passed by both built-in stores (SQLite on files in the project,
// PostgreSQL on a schema of its own: required with CI=true, skipped elsewhere with the reason printed).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cloneForPacking,
  exec,
  linkFromRepository,
  newApp,
  NPM_QUIET,
  pack,
} from '../support/packed-package.js';
import { dropSchema, TEST_POSTGRES_URL, withPostgres } from '../support/postgres.js';

let work: string;
let project: string;
const schema = `dmcp_packed_contract_${randomBytes(5).toString('hex')}`;

// A backend's contract test, with the built-in SQLite store standing for the backend.
const SQLITE = `
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { createSqliteTaskStore } from 'durable-mcp/advanced';
import { runTaskAdminContract, runTaskStoreContract } from 'durable-mcp/testing/contract';

let path = '';
const options = {
  name: 'sqlite, from the package',
  // A new, empty store for every test.
  newStore: () => createSqliteTaskStore({ path: (path = join(mkdtempSync(join(import.meta.dirname, 'data-')), 't.db')) }),
  // Another instance on the same file, as another process would open it.
  openPeer: () => createSqliteTaskStore({ path }),
};
runTaskStoreContract(options);
runTaskAdminContract(options);
`;

// The same on PostgreSQL: one schema, its tables emptied before each test. (pg is the package's dependency here; a
// backend on PostgreSQL has its own.)
const POSTGRES = `
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { createPostgresTaskStore } from 'durable-mcp/advanced';
import { migratePostgres } from 'durable-mcp/postgres';
import { runTaskAdminContract, runTaskStoreContract } from 'durable-mcp/testing/contract';

const connectionString = process.env.CONTRACT_POSTGRES_URL;
const schema = process.env.CONTRACT_POSTGRES_SCHEMA;
const admin = new pg.Pool({ connectionString, max: 1 });
beforeAll(() => migratePostgres({ connectionString, schema }));
afterAll(() => admin.end());

const open = () => createPostgresTaskStore({ connectionString, schema, poolSize: 4 });
const options = {
  name: 'postgres, from the package',
  newStore: async () => {
    const s = pg.escapeIdentifier(schema);
    await admin.query('TRUNCATE ' + s + '.tasks, ' + s + '.slot_holders CASCADE');
    return open();
  },
  openPeer: open,
};
runTaskStoreContract(options);
runTaskAdminContract(options);
`;

interface VitestReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  testResults: { assertionResults: { fullName: string; status: string; failureMessages: string[] }[] }[];
}

/** Runs one test file of the project with its Vitest; the JSON report, and how long it took. */
function runVitest(file: string, env: Record<string, string> = {}): { report: VitestReport; ms: number } {
  const out = join(project, `${file}.json`);
  const started = Date.now();
  // A clean environment: none of the variables of the Vitest running this test.
  const r = spawnSync(
    process.execPath,
    [join(project, 'node_modules/vitest/vitest.mjs'), 'run', file, '--reporter=json', `--outputFile=${out}`],
    {
      cwd: project,
      encoding: 'utf8',
      timeout: 240_000,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TMPDIR: tmpdir(), ...env },
    },
  );
  const ms = Date.now() - started;
  let report: VitestReport;
  try {
    report = JSON.parse(readFileSync(out, 'utf8')) as VitestReport;
  } catch {
    throw new Error(`vitest wrote no report (exit ${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
  }
  return { report, ms };
}

/** The suite passed whole: no failure (with their messages shown), the store's tests and the admin port's ran. */
function expectPassed({ report }: { report: VitestReport }, name: string): void {
  const results = report.testResults.flatMap((file) => file.assertionResults);
  const failed = results.filter((t) => t.status === 'failed');
  expect(failed.map((t) => `${t.fullName}: ${t.failureMessages.join('\n')}`)).toEqual([]);
  const passed = (suite: string): number =>
    results.filter((t) => t.status === 'passed' && t.fullName.startsWith(`${suite}: ${name}`)).length;
  expect(passed('TaskStore contract')).toBeGreaterThan(100);
  expect(passed('TaskAdmin contract')).toBeGreaterThan(20);
  // Both built-in stores have every optional capability: nothing skips.
  expect(report.numPendingTests).toBe(0);
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'durable-mcp-contract-'));
  const tarball = pack(cloneForPacking(work), work);
  project = newApp(work, 'acme-store', {});
  // Without install scripts, as in package-consumer.test.ts: the repository's built addon stands for the one npm
  // would build. Vitest, the optional peer dependency, is the project's own: the repository's stands for it.
  exec('npm', ['install', ...NPM_QUIET, '--ignore-scripts', tarball], project);
  linkFromRepository(project, 'better-sqlite3');
  linkFromRepository(project, 'vitest');
  writeFileSync(join(project, 'sqlite.test.js'), SQLITE);
  writeFileSync(join(project, 'postgres.test.js'), POSTGRES);
}, 300_000);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('durable-mcp/testing/contract from the packed package', () => {
  it('declares Vitest an optional peer dependency, and ships the suite', () => {
    const pkg = JSON.parse(readFileSync(join(project, 'node_modules/durable-mcp/package.json'), 'utf8')) as {
      peerDependencies?: Record<string, string>;
      peerDependenciesMeta?: Record<string, { optional?: boolean }>;
    };
    expect(pkg.peerDependencies?.vitest).toBeDefined();
    expect(pkg.peerDependenciesMeta?.vitest?.optional).toBe(true);
  });

  it('passes on the SQLite store', () => {
    const run = runVitest('sqlite.test.js');
    console.log(`the contract from the package on SQLite: ${run.ms} ms`);
    expectPassed(run, 'sqlite, from the package');
  }, 240_000);
});

await withPostgres('the contract from the packed package on PostgreSQL', () => {
  afterAll(() => dropSchema(schema));

  it('passes on the PostgreSQL store', () => {
    const run = runVitest('postgres.test.js', {
      CONTRACT_POSTGRES_URL: TEST_POSTGRES_URL,
      CONTRACT_POSTGRES_SCHEMA: schema,
    });
    console.log(`the contract from the package on PostgreSQL: ${run.ms} ms`);
    expectPassed(run, 'postgres, from the package');
  }, 240_000);
});
