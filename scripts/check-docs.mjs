// Type-checks every ```ts / ```typescript block of README.md and docs/*.md against the package as its users import
// it: `durable-mcp`, `durable-mcp/client`, … resolve through package.json `exports` to the build output in dist/
// (run `npm run build` first). Each block is its own module, checked as if it were a file next to its page, with the
// compiler options of tsconfig.json: one TypeScript program over in-memory files (what `tsc --noEmit` checks, without
// writing temporary files), so each error maps back to its line of markdown.
//
// Fence info words:
//   no-check      the block is a deliberate fragment and is not checked (keep these rare);
//   path=<file>   the block is checked as if it were that file of this repository (e.g. a test beside a store,
//                 importing the store contract by a relative path); the file must not exist.
//
// Also checks that typedoc.json documents exactly the entry points of package.json `exports`.
// Prints `file:line:column` of the markdown for each error; exits 1 if there is any.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(import.meta.dirname, '..');
if (!existsSync(join(root, 'dist/src/index.d.ts'))) {
  console.log('docs: no build output in dist/: run `npm run build` first');
  process.exit(1);
}
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];
const CHECKED = new Set(['ts', 'typescript']);
const problems = [];

/** The fenced code blocks of a markdown text: info string, first content line (1-based), indent and body. */
function fencedBlocks(text) {
  const lines = text.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const body = [];
    let j = i + 1;
    const close = new RegExp(`^\\s*${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    for (; j < lines.length && !close.test(lines[j]); j++) {
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j].trimStart());
    }
    blocks.push({ info: info.trim(), line: i + 2, indent: indent.length, body: body.join('\n') });
    i = j;
  }
  return blocks;
}

/** Each checked block as a virtual file: where it sits, where it came from. */
const virtual = new Map();
let optedOut = 0;
for (const page of pages) {
  for (const block of fencedBlocks(readFileSync(join(root, page), 'utf8'))) {
    const [lang = '', ...words] = block.info.split(/\s+/);
    if (!CHECKED.has(lang.toLowerCase())) continue;
    if (words.includes('no-check')) {
      optedOut += 1;
      continue;
    }
    const at = words.find((w) => w.startsWith('path='))?.slice('path='.length);
    const file = at
      ? join(root, at)
      : join(root, dirname(page), `${page.replace(/.*\//, '')}.${block.line}.ts`);
    if (at && (!file.startsWith(root + '/') || !file.endsWith('.ts') || existsSync(file))) {
      problems.push(
        `${page}:${block.line - 1}: path=${at} must name a .ts file of this repository that does not exist`,
      );
      continue;
    }
    virtual.set(file, { page, line: block.line, indent: block.indent, text: block.body });
  }
}

const config = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
Object.assign(options, {
  noEmit: true,
  declaration: false,
  sourceMap: false,
  moduleDetection: ts.ModuleDetectionKind.Force, // every block is a module, even without import or export
});
delete options.outDir;
delete options.rootDir;
// The package's name resolves through its exports to dist/, as for users (tsconfig.json maps it to src/ for the repo).
delete options.paths;

const host = ts.createCompilerHost(options);
const { fileExists, readFile, getSourceFile, directoryExists } = host;
host.fileExists = (f) => virtual.has(f) || fileExists.call(host, f);
host.readFile = (f) => virtual.get(f)?.text ?? readFile.call(host, f);
host.directoryExists = (d) =>
  [...virtual.keys()].some((f) => f.startsWith(d + '/')) || (directoryExists?.call(host, d) ?? true);
host.getSourceFile = (f, language, ...rest) => {
  const block = virtual.get(f);
  return block
    ? ts.createSourceFile(f, block.text, language, true, ts.ScriptKind.TS)
    : getSourceFile.call(host, f, language, ...rest);
};

const program = ts.createProgram({ rootNames: [...virtual.keys()], options, host });
const diagnostics = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()];
for (const file of virtual.keys()) {
  const source = program.getSourceFile(file);
  if (source)
    diagnostics.push(...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source));
}
for (const d of diagnostics) {
  const message = ts.flattenDiagnosticMessageText(d.messageText, '\n  ');
  const block = d.file && virtual.get(d.file.fileName);
  if (!d.file || d.start === undefined) problems.push(`error TS${d.code}: ${message}`);
  else if (!block) problems.push(`${relative(root, d.file.fileName)}: error TS${d.code}: ${message}`);
  else {
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    problems.push(
      `${block.page}:${block.line + line}:${block.indent + character + 1}: error TS${d.code}: ${message}`,
    );
  }
}

// The API reference covers exactly what package.json exports: `./dist/src/x.d.ts` is documented from `src/x.ts`.
const exported = Object.values(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).exports)
  .map((entry) => entry.types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '.ts'))
  .sort();
const documented = [...JSON.parse(readFileSync(join(root, 'typedoc.json'), 'utf8')).entryPoints].sort();
if (JSON.stringify(exported) !== JSON.stringify(documented)) {
  problems.push(
    `typedoc.json entryPoints ${documented.join(', ')} differ from package.json exports ${exported.join(', ')}`,
  );
}

for (const problem of problems) console.log(problem);
console.log(
  `docs: ${virtual.size} TypeScript blocks checked in ${pages.length} pages, ${optedOut} opted out (no-check), ` +
    `${problems.length} problems`,
);
process.exit(problems.length === 0 ? 0 : 1);
