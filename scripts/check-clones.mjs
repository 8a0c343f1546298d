// Copied code where one source is meant to hold it: jscpd (at least 50 tokens) over each set of folders below, failing
// on any clone whose two copies lie in different groups of one set. The two stores keep only their SQL text, driver
// and concurrency scheme apart (the rules live in src/stores/core/), and the operator API's JSON is written once for
// the server, the dashboard and the CLI. Their SQL folders and tests are left out. Prints each clone; exits 1 if any.
import { createRequire } from 'node:module';
import { relative, resolve } from 'node:path';

// Its CommonJS build: the ES module one imports `colors/safe` without an extension, which Node refuses.
const { detectClones } = createRequire(import.meta.url)('jscpd');

const root = resolve(import.meta.dirname, '..');
const MIN_TOKENS = 50;
const SETS = [
  {
    name: 'stores',
    groups: { sqlite: ['src/stores/sqlite/'], postgres: ['src/stores/postgres/'] },
    ignore: ['**/sql/**', '**/*.test.ts'],
  },
  {
    name: 'operator API',
    groups: { server: ['src/admin/'], dashboard: ['src/admin/ui/'], cli: ['src/cli/admin-'] },
    ignore: ['**/*.test.ts'],
  },
];

/** The group of a file (a path relative to the root): the one listing the longest prefix of it, if any. */
function groupOf(groups, file) {
  let best;
  for (const [name, prefixes] of Object.entries(groups))
    for (const prefix of prefixes)
      if (file.startsWith(prefix) && (best === undefined || prefix.length > best.prefix.length))
        best = { name, prefix };
  return best?.name;
}

/** The folders scanned: each prefix's own (files outside every group are then passed over). */
const scanned = (groups) => [
  ...new Set(
    Object.values(groups)
      .flat()
      .map((prefix) => resolve(root, prefix.replace(/[^/]*$/, ''))),
  ),
];

let found = 0;
for (const set of SETS) {
  const clones = await detectClones({
    path: scanned(set.groups),
    ignore: set.ignore,
    format: ['typescript'],
    minTokens: MIN_TOKENS,
    reporters: [],
    silent: true,
    absolute: true,
  });
  for (const clone of clones) {
    const [a, b] = [clone.duplicationA, clone.duplicationB].map((d) => ({
      file: relative(root, d.sourceId),
      lines: `${d.start.line}-${d.end.line}`,
    }));
    const [ga, gb] = [groupOf(set.groups, a.file), groupOf(set.groups, b.file)];
    if (ga === undefined || gb === undefined || ga === gb) continue;
    found += 1;
    console.log(`${set.name}: ${a.file}:${a.lines} (${ga}) = ${b.file}:${b.lines} (${gb})`);
  }
}
if (found > 0) {
  console.log(`clones: ${found} between sources meant to hold the code once`);
  process.exit(1);
}
console.log('clones: none');
