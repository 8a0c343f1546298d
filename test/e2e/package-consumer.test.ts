// The package as a user gets it: a fresh clone of the committed tree (HEAD), packed with `npm pack` (which builds it:
// the prepare script) and installed with npm into an app outside this repository, without its optional dependency
// (`--omit=optional`: no better-sqlite3). There an app that uses only PostgreSQL serves a tool and calls it, and
// asking for SQLite fails naming the package. Then, with better-sqlite3: its public types compile with
// `skipLibCheck: false` and without `@types/better-sqlite3` or `@types/pg`; `durable-mcp` and `durable-mcp/client`
// load without the native SQLite addon or pg; an app serves a tool on SQLite and calls it from another process with
// `durable-mcp/client`. The clone also serves as a `file:` dependency, which npm links and builds.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startListening } from '../support/cli.js';
import { dropSchema, TEST_POSTGRES_URL, withPostgres } from '../support/postgres.js';
import {
  cloneForPacking,
  exec,
  linkFromRepository,
  newApp,
  NPM_QUIET,
  pack,
  ROOT,
} from '../support/packed-package.js';
import { VERSION } from '../../src/version.js';

const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

let work: string;
let project: string;
let tarball: string;
/** What `import('durable-mcp')` gave in the app depending on the clone by `file:`. */
let linkedImport: { status: number | null; stdout: string; stderr: string };
const modules = (): string => join(project, 'node_modules');

/** Runs a script of the consumer with node. */
const runScript = (file: string, args: string[] = []) =>
  spawnSync(process.execPath, [join(project, file), ...args], {
    cwd: project,
    encoding: 'utf8',
    timeout: 60_000,
  });

function typecheck(files: Record<string, string>): { code: number; output: string } {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(project, name), text);
  const r = spawnSync(process.execPath, [TSC, '-p', join(project, 'tsconfig.json')], { encoding: 'utf8' });
  return { code: r.status ?? -1, output: `${r.stdout}${r.stderr}` };
}

const TSCONFIG = JSON.stringify({
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    types: ['node'],
  },
  include: ['*.ts'],
});

// An app's server: a task-supporting tool with a step, on a SQLite file.
const SERVER = `
import { createDurableMcp, createSqliteBackend, defineTool, textResult } from 'durable-mcp';

const shout = defineTool({
  name: 'shout',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  task: { support: 'required' },
  handler: async ({ text }, ctx) => textResult(await ctx.step('upper', () => text.toUpperCase())),
});
const mcp = createDurableMcp({ toolSets: [{ tools: [shout] }], backend: createSqliteBackend({ path: 'data/tasks.db' }) });
const running = await mcp.listen({ host: '127.0.0.1', port: 0 });
console.log('listening on ' + running.url);
process.on('SIGTERM', () => void mcp.close().then(() => process.exit(0)));
`;

// The app's client, in another process: the call becomes a task, followed to its end.
const CALL = `
import { createClient } from 'durable-mcp/client';

const client = createClient({ url: process.argv[2] });
const call = await client.callTool('shout', { text: 'durable' });
const outcome = call.kind === 'task' ? await call.task.result() : { status: 'no task', result: call.result };
console.log(JSON.stringify({ kind: call.kind, status: outcome.status, content: outcome.result?.content }));
await client.close();
`;

// An app that uses only PostgreSQL: a tool served from a schema of its own, called with durable-mcp/client; and what
// asking for SQLite says where better-sqlite3 is not installed.
const POSTGRES_APP = `
import { createDurableMcp, createSqliteBackend, defineTool, textResult } from 'durable-mcp';
import { createPostgresBackend } from 'durable-mcp/postgres';
import { createClient } from 'durable-mcp/client';

const [connectionString, schema] = process.argv.slice(2);
let sqlite = 'opened';
try {
  await createSqliteBackend({ path: 'sqlite-absent/tasks.db' }).close();
} catch (err) {
  sqlite = err.message;
}
const shout = defineTool({
  name: 'shout',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  task: { support: 'required' },
  handler: async ({ text }, ctx) => textResult(await ctx.step('upper', () => text.toUpperCase())),
});
const backend = await createPostgresBackend({ connectionString, schema, migrate: false });
const mcp = createDurableMcp({ toolSets: [{ tools: [shout] }], backend });
const running = await mcp.listen({ host: '127.0.0.1', port: 0 });
const client = createClient({ url: running.url });
const call = await client.callTool('shout', { text: 'postgres' });
const outcome = call.kind === 'task' ? await call.task.result() : { status: 'no task', result: call.result };
await client.close();
await mcp.close();
console.log(JSON.stringify({ sqlite, kind: call.kind, status: outcome.status, content: outcome.result?.content }));
`;

// The README's example, plus each public entry's main names in use.
const EXAMPLE = `
import { createDurableMcp, createSqliteBackend, defineTool, textResult, type DurableMcpOptions } from 'durable-mcp';
import { createSqliteBackend as sqliteBackend, type SqliteBackendOptions } from 'durable-mcp/sqlite';
import { createPostgresBackend, migratePostgres } from 'durable-mcp/postgres';
import { createClient, ProtocolError as ClientError } from 'durable-mcp/client';
import { createSqliteJournal } from 'durable-mcp/journal';
import { createTestKit, type ReplayReport } from 'durable-mcp/testing';
import { createGateway, type GatewayOptions } from 'durable-mcp/gateway';

const greet = defineTool<{ name: string }>({
  name: 'greet',
  inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  handler: async ({ name }, ctx) => textResult(await ctx.step('greet', () => 'Hello, ' + name)),
});
const options: DurableMcpOptions = { toolSets: [{ tools: [greet] }], backend: createSqliteBackend({ path: ':memory:' }) };
const mcp = createDurableMcp(options);
const running = await mcp.listen({ port: 0 });
const client = createClient({ url: running.url, journal: createSqliteJournal(':memory:') });
const call = await client.callTool('greet', { name: 'Ada' });
const shown: string = call.kind;
export const later = async (): Promise<void> => {
  const pg = await createPostgresBackend({ connectionString: 'postgres://127.0.0.1/none', schema: 'x' });
  const applied: number[] = await migratePostgres({ connectionString: 'postgres://127.0.0.1/none' });
  await pg.close();
  const file: SqliteBackendOptions = { path: 'data/tasks.db', busyTimeoutMs: 1_000 };
  await sqliteBackend(file).close();
  const kit = await createTestKit({ tools: [greet] });
  const report: ReplayReport = await kit.replay({ tool: 'greet', args: {}, steps: [], answers: {} });
  await kit.close();
  const gateway: GatewayOptions = {
    upstream: { kind: 'stdio', command: 'node', args: ['server.js'] },
    backend: createSqliteBackend({ path: ':memory:' }),
    catalog: { idempotentTools: ['search_*'] },
  };
  const gw = await createGateway(gateway);
  await gw.close();
  console.log(applied, ClientError, report.ok);
};
console.log(shown);
await mcp.close();
`;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'durable-mcp-consumer-'));
  const clone = cloneForPacking(work);
  // A `file:` dependency on the clone: npm links it and runs its prepare script there.
  const linked = newApp(work, 'linked-app', { 'durable-mcp': true });
  exec('npm', ['install', ...NPM_QUIET, 'file:../durable-mcp'], linked);
  linkedImport = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', "console.log(typeof (await import('durable-mcp')).createDurableMcp)"],
    { cwd: linked, encoding: 'utf8' },
  );
  // npm pack runs the prepare script too (an incremental build after the one above).
  tarball = pack(clone, work);
  project = newApp(work, 'consumer', { 'better-sqlite3': true });
  writeFileSync(join(project, 'tsconfig.json'), TSCONFIG);
  // Without the optional dependency, better-sqlite3, as a PostgreSQL-only app installs it; the tests on SQLite link
  // the repository's build in (where no prebuilt binary can be downloaded, compiling one takes over a minute).
  exec('npm', ['install', ...NPM_QUIET, '--ignore-scripts', '--omit=optional', tarball], project);
  // @types/node, as any Node project that type-checks has it.
  linkFromRepository(project, '@types/node');
}, 240_000);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

/**
 * Every entry but `/postgres` and `/advanced` in a plain script; the client journal, which does need the addon, says
 * so when it opens a file.
 */
function entriesWithoutDrivers(): void {
  const entries = ['durable-mcp', 'durable-mcp/sqlite', 'durable-mcp/client', 'durable-mcp/journal'];
  writeFileSync(
    join(project, 'entries.mjs'),
    `for (const name of ${JSON.stringify(entries)}) await import(name);\n` +
      "const { createSqliteJournal } = await import('durable-mcp/journal');\n" +
      "try { createSqliteJournal(':memory:'); } catch (err) { console.log(err.message); }\n",
  );
  const r = runScript('entries.mjs');
  expect(r.stderr).toBe('');
  expect(r.stdout.trim()).toBe(
    'the SQLite client journal needs the optional package better-sqlite3 (npm install better-sqlite3@12)',
  );
}

await withPostgres('the packed package in an app on PostgreSQL only', () => {
  describe('the packed package in an app on PostgreSQL only, installed without its optional dependency', () => {
    const schema = `dmcp_consumer_${randomBytes(4).toString('hex')}`;
    beforeAll(() => rmSync(join(modules(), 'better-sqlite3'), { recursive: true, force: true }));
    afterAll(() => dropSchema(schema));

    it('has no better-sqlite3, migrates with the durable-mcp command, and serves and calls a tool', () => {
      expect(existsSync(join(modules(), 'better-sqlite3'))).toBe(false);
      expect(existsSync(join(modules(), 'pg'))).toBe(true);
      const bin = join(modules(), '.bin/durable-mcp');
      const migrated = spawnSync(bin, ['migrate', '--store', TEST_POSTGRES_URL, '--pg-schema', schema], {
        cwd: project,
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(migrated.stderr).toBe('');
      expect(migrated.stdout).toContain(`schema ${schema}: applied 1, 2`);
      writeFileSync(join(project, 'postgres-app.mjs'), POSTGRES_APP);
      const run = runScript('postgres-app.mjs', [TEST_POSTGRES_URL, schema]);
      expect(run.stderr).toBe('');
      expect(JSON.parse(run.stdout)).toEqual({
        sqlite: 'the SQLite store needs the optional package better-sqlite3 (npm install better-sqlite3@12)',
        kind: 'task',
        status: 'completed',
        content: [{ type: 'text', text: 'POSTGRES' }],
      });
      // Nothing was created for the SQLite file it asked for.
      expect(existsSync(join(project, 'sqlite-absent'))).toBe(false);
    }, 90_000);

    it('the durable-mcp command, asked for a SQLite file, says what it needs', () => {
      const bin = join(modules(), '.bin/durable-mcp');
      const r = spawnSync(bin, ['migrate', '--store', 'sqlite-absent/tasks.db'], {
        cwd: project,
        encoding: 'utf8',
      });
      expect(r.status).toBe(3);
      expect(r.stderr).toContain('needs the optional package better-sqlite3 (npm install better-sqlite3@12)');
    });
  });
});

describe('the packed package in a consumer project', () => {
  beforeAll(() => {
    // The optional dependency, as npm installs it by default: the repository's build, of the major the package asks.
    const range = (
      JSON.parse(readFileSync(join(modules(), 'durable-mcp/package.json'), 'utf8')) as {
        optionalDependencies: Record<string, string>;
      }
    ).optionalDependencies['better-sqlite3'];
    const built = (
      JSON.parse(readFileSync(join(ROOT, 'node_modules/better-sqlite3/package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
    expect(range).toMatch(/^\^12\./);
    expect(built).toMatch(/^12\./);
    linkFromRepository(project, 'better-sqlite3');
  });

  it('is built by npm pack from a fresh clone, and holds the built package and nothing else', () => {
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map((entry) => entry.replace(/^package\//, ''));
    const pkg = JSON.parse(readFileSync(join(modules(), 'durable-mcp/package.json'), 'utf8')) as {
      exports: Record<string, Record<string, string>>;
      bin: Record<string, string>;
    };
    const entryFiles = Object.values(pkg.exports).flatMap((entry) => Object.values(entry));
    for (const file of [
      ...['package.json', 'README.md', 'LICENSE', 'scripts/prepare.mjs', ...Object.values(pkg.bin)],
      ...entryFiles.map((path) => path.replace(/^\.\//, '')),
      ...['dist/src/cli/main.js', 'dist/examples/demo/index.js', 'dist/examples/conformance/index.js'],
      // The stores' migrations, read from beside their modules.
      ...[
        'dist/src/stores/sqlite/migrations/0001-server-meta.sql',
        'dist/src/stores/postgres/migrations/0001-tasks.sql',
      ],
    ])
      expect(files, file).toContain(file);
    const shipped =
      /^(package\.json|README\.md|LICENSE|scripts\/prepare\.mjs|bin\/[\w-]+\.js|dist\/.+\.(js|d\.ts|html|css))$/;
    const migration = /^dist\/src\/stores\/(sqlite|postgres)\/migrations\/\d{4}-[a-z0-9-]+\.sql$/;
    // The store contract (durable-mcp/testing/contract) is the one suite that ships, without the sealing part.
    const contract = /^dist\/src\/stores\/(contract\/)?[\w-]+\.contract\.(js|d\.ts)$/;
    const unexpected = files.filter(
      (f) =>
        !(shipped.test(f) || migration.test(f)) ||
        /\.test\.|conformance-client|sealing\.contract/.test(f) ||
        (/\.contract\./.test(f) && !contract.test(f)),
    );
    expect(unexpected).toEqual([]);
  });

  it('is built in place as a file: dependency, which npm links', () => {
    expect(linkedImport.stderr).toBe('');
    expect(linkedImport.stdout.trim()).toBe('function');
  });

  it('serves a tool on SQLite from the app, called from another process with durable-mcp/client', async () => {
    writeFileSync(join(project, 'server.mjs'), SERVER);
    writeFileSync(join(project, 'call.mjs'), CALL);
    const server = await startListening([join(project, 'server.mjs')], { cwd: project, timeoutMs: 30_000 });
    try {
      const call = spawnSync(process.execPath, [join(project, 'call.mjs'), server.url], {
        cwd: project,
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(call.stderr).toBe('');
      expect(JSON.parse(call.stdout)).toEqual({
        kind: 'task',
        status: 'completed',
        content: [{ type: 'text', text: 'DURABLE' }],
      });
      expect(existsSync(join(project, 'data/tasks.db'))).toBe(true);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    // And the command it installs.
    const bin = spawnSync(join(modules(), '.bin/durable-mcp'), ['--version'], { encoding: 'utf8' });
    expect(bin.stdout).toContain(VERSION);
  }, 90_000);

  it("ships the operators' dashboard: its page, style and compiled scripts, without their sources", () => {
    const ui = join(modules(), 'durable-mcp', 'dist', 'src', 'admin', 'ui');
    for (const name of ['index.html', 'dashboard.css', 'app.js', 'live.js'])
      expect(existsSync(join(ui, name)), name).toBe(true);
    expect(readdirSync(ui).filter((name) => name.endsWith('.ts'))).toEqual([]);
  });

  it('durable-mcp, /sqlite, /client and /journal load without the native SQLite addon or pg installed', () => {
    // Both are dependencies of the package: hidden for this test.
    for (const name of ['better-sqlite3', 'pg'])
      renameSync(join(modules(), name), join(modules(), `${name}.hidden`));
    try {
      entriesWithoutDrivers();
    } finally {
      for (const name of ['better-sqlite3', 'pg'])
        renameSync(join(modules(), `${name}.hidden`), join(modules(), name));
    }
  });

  it('the durable-mcp command works on a SQLite file without pg installed', () => {
    renameSync(join(modules(), 'pg'), join(modules(), 'pg.hidden'));
    try {
      const r = spawnSync(join(modules(), '.bin/durable-mcp'), ['migrate', '--store', 'no-pg/tasks.db'], {
        cwd: project,
        encoding: 'utf8',
      });
      expect(r.stderr).toBe('');
      expect(r.stdout).toMatch(/^no-pg\/tasks\.db: applied 1, 2, /);
    } finally {
      renameSync(join(modules(), 'pg.hidden'), join(modules(), 'pg'));
    }
  });

  it('type-checks an example with skipLibCheck false and no @types for the drivers, then runs it', () => {
    // The README's example too, as written there.
    const readme = /```ts\n([\s\S]*?)```/.exec(readFileSync(join(ROOT, 'README.md'), 'utf8'))?.[1];
    expect(readme).toContain("from 'durable-mcp'");
    const checked = typecheck({ 'example.ts': EXAMPLE, 'readme.ts': readme as string });
    expect(checked.output).toBe('');
    expect(checked.code).toBe(0);
    // The same compiler does see a missing declaration file: durable-mcp/advanced names the drivers' types.
    const advanced = typecheck({
      'example.ts': EXAMPLE,
      'readme.ts': readme as string,
      'advanced.ts':
        "import { openSqlite } from 'durable-mcp/advanced';\nexport const db = openSqlite({ path: ':memory:' });\n",
    });
    expect(advanced.code).not.toBe(0);
    expect(advanced.output).toMatch(/TS7016.*better-sqlite3/);
    rmSync(join(project, 'advanced.ts'));
    // Run the example's server and client as plain JavaScript from the tarball.
    writeFileSync(
      join(project, 'run.mjs'),
      stripTypes(EXAMPLE.replace(/export const later[\s\S]*?\n};\n/, '')),
    );
    const run = spawnSync(process.execPath, [join(project, 'run.mjs')], {
      cwd: project,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('result');
  }, 120_000);
});

/** Just enough type stripping for the example above (its only annotations are written to be removed this way). */
function stripTypes(ts: string): string {
  return ts
    .replace(/, type DurableMcpOptions/, '')
    .replace(/, type SqliteBackendOptions/, '')
    .replace(/, type ReplayReport/, '')
    .replace(/, type GatewayOptions/, '')
    .replace(/defineTool<\{ name: string \}>/, 'defineTool')
    .replace(/const options: DurableMcpOptions =/, 'const options =')
    .replace(/const shown: string =/, 'const shown =');
}
