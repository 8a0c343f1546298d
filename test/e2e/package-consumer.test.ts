// The package as a user gets it: a fresh clone of the committed tree (HEAD), packed with `npm pack` (which builds it:
// the prepare script) and installed with npm into an app outside this repository. Its public types compile with
// `skipLibCheck: false` and without `@types/better-sqlite3` or `@types/pg`; `durable-mcp/client` loads without the
// native SQLite addon (or pg); an app serves a tool on SQLite and calls it from another process with
// `durable-mcp/client`. The clone also serves as a `file:` dependency, which npm links and builds.
import { execFileSync, spawnSync } from 'node:child_process';
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

// The README's example, plus each public entry's main names in use.
const EXAMPLE = `
import { createDurableMcp, createSqliteBackend, defineTool, textResult, type DurableMcpOptions } from 'durable-mcp';
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
  // Without install scripts: where no prebuilt better-sqlite3 can be downloaded, compiling it takes over a minute.
  // The repository's, of the version the package pins, built, stands for it.
  exec('npm', ['install', ...NPM_QUIET, '--ignore-scripts', tarball], project);
  const version = (dir: string): unknown =>
    (JSON.parse(readFileSync(join(dir, 'better-sqlite3/package.json'), 'utf8')) as { version: unknown })
      .version;
  expect(version(modules())).toBe(version(join(ROOT, 'node_modules')));
  linkFromRepository(project, 'better-sqlite3');
  // @types/node, as any Node project that type-checks has it.
  linkFromRepository(project, '@types/node');
}, 240_000);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

/** `durable-mcp/client` in a plain script, and `durable-mcp/journal`, which does need the addon and says so. */
function clientWithoutDrivers(): void {
  writeFileSync(
    join(project, 'client.mjs'),
    "const c = await import('durable-mcp/client');\nconsole.log(typeof c.createClient);\n",
  );
  const r = spawnSync(process.execPath, [join(project, 'client.mjs')], { cwd: project, encoding: 'utf8' });
  expect(r.stderr).toBe('');
  expect(r.stdout.trim()).toBe('function');
  // The check can fail: the journal entry does need the addon, and says so.
  writeFileSync(join(project, 'journal.mjs'), "await import('durable-mcp/journal');\n");
  const journal = spawnSync(process.execPath, [join(project, 'journal.mjs')], {
    cwd: project,
    encoding: 'utf8',
  });
  expect(journal.status).not.toBe(0);
  expect(journal.stderr).toMatch(/better-sqlite3/);
}

describe('the packed package in a consumer project', () => {
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
    ])
      expect(files, file).toContain(file);
    const shipped =
      /^(package\.json|README\.md|LICENSE|scripts\/prepare\.mjs|bin\/[\w-]+\.js|dist\/.+\.(js|d\.ts|html|css))$/;
    // The store contract (durable-mcp/testing/contract) is the one suite that ships, without the sealing part.
    const contract = /^dist\/src\/stores\/(contract\/)?[\w-]+\.contract\.(js|d\.ts)$/;
    const unexpected = files.filter(
      (f) =>
        !shipped.test(f) ||
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

  it('durable-mcp/client loads without the native SQLite addon or pg installed', () => {
    // Both are dependencies of the package: hidden for this test.
    for (const name of ['better-sqlite3', 'pg'])
      renameSync(join(modules(), name), join(modules(), `${name}.hidden`));
    try {
      clientWithoutDrivers();
    } finally {
      for (const name of ['better-sqlite3', 'pg'])
        renameSync(join(modules(), `${name}.hidden`), join(modules(), name));
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
    .replace(/, type ReplayReport/, '')
    .replace(/, type GatewayOptions/, '')
    .replace(/defineTool<\{ name: string \}>/, 'defineTool')
    .replace(/const options: DurableMcpOptions =/, 'const options =')
    .replace(/const shown: string =/, 'const shown =');
}
