// The layer rules of .dependency-cruiser.mjs: a fixture tree with one deliberate violation per kind of rule fails
// with that rule's name, the real src/, bench/ and scripts/ pass, and the table in docs/architecture.md is the one in
// scripts/layers.mjs.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseOptions, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { folderOf, forbidden, layers, mayImport } from '../scripts/layers.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const fakePackage = (name: string) => ({
  [`node_modules/${name}/package.json`]: JSON.stringify({ name, main: 'index.js' }),
  [`node_modules/${name}/index.js`]: 'module.exports = {};\n',
});

/** File → contents. Comments name the rule each file breaks; files without one break none. */
const FIXTURE: Record<string, string> = {
  'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } }),
  ...fakePackage('better-sqlite3'),
  ...fakePackage('pg'),
  'src/wire/w.ts': "import 'node:http';\nexport const w = 1;\n", // layer-wire: node:http
  'src/stores/b.ts': "import 'pg';\nexport type B = number;\nexport const b = 1;\n",
  'src/stores/y.ts': 'export const y = 1;\n',
  'src/tasks/a.ts': "import { b } from '../stores/b.js';\nexport const a = b;\n", // layer-tasks
  'src/tasks/a.test.ts': "import { b } from '../stores/b.js';\nexport const t = b;\n",
  'src/tasks/db.ts': "import 'better-sqlite3';\n", // layer-tasks: a driver
  'src/worker/k.ts': "import type { B } from '../stores/b.js';\nexport type K = B;\n", // layer-worker, type-only
  'src/protocol/tasks/x.ts': "import { y } from '../../stores/y.js';\nexport const x = y;\n", // layer-protocol
  // A cycle of type-only imports: no-circular.
  'src/protocol/p.ts': "import type { Q } from './q.js';\nexport type P = { q?: Q };\n",
  'src/protocol/q.ts': "import type { P } from './p.js';\nexport type Q = { p?: P };\nexport const q = 1;\n",
  'src/auth/types.ts': "import type { Q } from '../protocol/q.js';\nexport type T = Q;\n",
  'src/auth/value.ts': "import { q } from '../protocol/q.js';\nexport const v = q;\n", // layer-auth-types
  'src/legacy/l.ts': 'export const l = 1;\n',
  'src/transport/http/h.ts': "import { l } from '../../legacy/l.js';\nexport const h = l;\n", // layer-transport-http
  'src/transport/http/r.ts': 'export const r = 1;\nexport type R = number;\n',
  'src/legacy/types.ts': "import type { R } from '../transport/http/r.js';\nexport type M = R;\n",
  'src/legacy/value.ts': "import { r } from '../transport/http/r.js';\nexport const v = r;\n", // layer-legacy-types
  'src/transport/stdio/s.ts': "import { l } from '../../legacy/l.js';\nexport const s = l;\n", // layer-transport-stdio
  'src/cli/c.ts': "import { l } from '../legacy/l.js';\nexport const c = l;\n", // allowed: a composition root
  'src/client/k.ts': "import 'better-sqlite3';\n", // layer-client
  'src/index.ts':
    "import { b } from './stores/b.js';\nimport { h } from './transport/http/h.js';\nexport { b, h };\n",
  'src/extra/n.ts': "import { w } from '../wire/w.js';\nexport const n = w;\n", // layer-unknown
  'src/wire/tool.ts': "import '../../scripts/s.mjs';\n", // no-tools-in-src
  'src/wire/tool.test.ts': "import '../../bench/r.ts';\n",
  'scripts/s.mjs': 'export const s = 1;\n',
  // Cycles in the tools: no-circular (bench/ through a type, scripts/chaos/ through a value).
  'bench/r.ts': "import type { T } from './tables/t.js';\nexport type R = { t?: T };\n",
  'bench/tables/t.ts': "import type { R } from '../r.js';\nexport type T = { r?: R };\n",
  'scripts/chaos/a.ts': "import { b } from './b.js';\nexport const a = (): number => b();\n",
  'scripts/chaos/b.ts': "import { a } from './a.js';\nexport const b = (): number => a();\n",
};

const EXPECTED = [
  'layer-auth-types: src/auth/value.ts → src/protocol/q.ts',
  'layer-client: src/client/k.ts → node_modules/better-sqlite3/index.js',
  'layer-legacy-types: src/legacy/value.ts → src/transport/http/r.ts',
  'layer-protocol: src/protocol/tasks/x.ts → src/stores/y.ts',
  'layer-tasks: src/tasks/a.ts → src/stores/b.ts',
  'layer-tasks: src/tasks/db.ts → node_modules/better-sqlite3/index.js',
  'layer-transport-http: src/transport/http/h.ts → src/legacy/l.ts',
  'layer-transport-stdio: src/transport/stdio/s.ts → src/legacy/l.ts',
  'layer-unknown: src/extra/n.ts → src/wire/w.ts',
  'layer-wire: src/wire/w.ts → http',
  'layer-worker: src/worker/k.ts → src/stores/b.ts',
  'no-circular: bench/r.ts → bench/tables/t.ts',
  'no-circular: scripts/chaos/a.ts → scripts/chaos/b.ts',
  'no-circular: src/protocol/p.ts → src/protocol/q.ts',
  'no-tools-in-src: src/wire/tool.ts → scripts/s.mjs',
];

/** Runs the rules of .dependency-cruiser.mjs on src/, bench/ and scripts/ of `baseDir`, as `npm test` does. */
const cruiseSrc = async (baseDir: string): Promise<ICruiseResult> => {
  const options: ICruiseOptions = await extractDepcruiseOptions(join(ROOT, '.dependency-cruiser.mjs'));
  const tsConfig = extractTSConfig(join(baseDir, 'tsconfig.json'));
  const result = await cruise(['src', 'bench', 'scripts'], { ...options, baseDir }, {}, { tsConfig });
  return result.output as ICruiseResult;
};

const violationsOf = (result: ICruiseResult): string[] =>
  result.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();

describe('the layer rules', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'layers-'));
    for (const [file, text] of Object.entries(FIXTURE)) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('report each deliberate violation in a fixture tree with its rule, and nothing else', async () => {
    expect(violationsOf(await cruiseSrc(dir))).toEqual(EXPECTED);
  });

  it('pass on src/, bench/ and scripts/, where every module of src/ but the tests belongs to exactly one layer', async () => {
    const result = await cruiseSrc(ROOT);
    expect(violationsOf(result)).toEqual([]);
    const layerPaths = forbidden()
      .filter(({ name = '' }) => /^layer-/.test(name) && !/-types$/.test(name) && name !== 'layer-unknown')
      .map((rule) => new RegExp(String(rule.from.path)));
    const modules = result.modules
      .map((m) => m.source)
      .filter((s) => /^src\/.*\.ts$/.test(s) && !/\.test\.ts$/.test(s));
    expect(modules.length).toBeGreaterThan(100);
    expect(modules.filter((s) => layerPaths.filter((p) => p.test(s)).length !== 1)).toEqual([]);
  });
});

describe('docs/architecture.md', () => {
  it('shows the table of scripts/layers.mjs: layer, folder and what it may import', () => {
    const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    const block = /<!-- layers:begin[^\n]*\n([\s\S]*?)<!-- layers:end -->/.exec(doc)?.[1] ?? '';
    const rows = block
      .split('\n')
      .filter((line) => line.startsWith('|'))
      .slice(2)
      .map((line) => line.split('|').map((cell) => cell.trim()));
    const shown = rows.map(([, layer, folder, , may]) => [layer, folder?.replaceAll('`', ''), may]);
    expect(shown).toEqual(Object.keys(layers).map((layer) => [layer, folderOf(layer), mayImport(layer)]));
  });
});
