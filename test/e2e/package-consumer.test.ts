// The package as a consumer gets it: `npm pack`, installed into a project outside this repository. Its public types
// compile with `skipLibCheck: false` and without `@types/better-sqlite3` or `@types/pg`; `durable-mcp/client` loads
// without the native SQLite addon (or pg) installed; the one-call server from the README runs from the tarball.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

let project: string;
const modules = (): string => join(project, 'node_modules');

/** Links a package of this repository's node_modules into the consumer (what `npm install` would have put there). */
function link(name: string): void {
  const target = join(modules(), name);
  mkdirSync(resolve(target, '..'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules', name), target, 'dir');
}

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

// The README's example, plus each public entry's main names in use.
const EXAMPLE = `
import { createDurableMcp, createSqliteBackend, defineTool, textResult, type DurableMcpOptions } from 'durable-mcp';
import { createPostgresBackend, migratePostgres } from 'durable-mcp/postgres';
import { createClient, ProtocolError as ClientError } from 'durable-mcp/client';
import { createSqliteJournal } from 'durable-mcp/journal';
import { createTestKit, type ReplayReport } from 'durable-mcp/testing';

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
  console.log(applied, ClientError, report.ok);
};
console.log(shown);
await mcp.close();
`;

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'durable-mcp-consumer-'));
  const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', project], {
    cwd: ROOT,
    encoding: 'utf8',
  }).trim();
  const tarball = join(project, packed.split('\n').pop() as string);
  const installed = join(modules(), 'durable-mcp');
  mkdirSync(installed, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module' }));
  writeFileSync(join(project, 'tsconfig.json'), TSCONFIG);
  // Every runtime dependency but the two drivers, and @types/node as any Node project has it.
  const { dependencies } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  for (const name of Object.keys(dependencies)) if (name !== 'better-sqlite3' && name !== 'pg') link(name);
  link('@types/node');
}, 120_000);

afterAll(() => {
  if (project !== undefined) rmSync(project, { recursive: true, force: true });
});

describe('the packed package in a consumer project', () => {
  it("ships the operators' dashboard: its page, style and compiled scripts, without their sources", () => {
    const ui = join(modules(), 'durable-mcp', 'dist', 'src', 'admin', 'ui');
    for (const name of ['index.html', 'dashboard.css', 'app.js', 'live.js'])
      expect(existsSync(join(ui, name)), name).toBe(true);
    expect(readdirSync(ui).filter((name) => name.endsWith('.ts'))).toEqual([]);
  });

  it('durable-mcp/client loads without the native SQLite addon or pg installed', () => {
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
  });

  it('type-checks an example with skipLibCheck false and no @types for the drivers, then runs it', () => {
    link('better-sqlite3');
    link('pg');
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
    .replace(/defineTool<\{ name: string \}>/, 'defineTool')
    .replace(/const options: DurableMcpOptions =/, 'const options =')
    .replace(/const shown: string =/, 'const shown =');
}
