// `npm test`: build, typecheck, lint, layer check (imports and cycles), the docs (API reference and the TypeScript
// blocks of the guides), the clone check (scripts/check-clones.mjs), unit + e2e tests, the benchmark at smoke size and the reliability suite with CI parameters
// (each section of either counts as one test), then the official conformance suite.
// Prints one closing line "tests: N passed, N failed, N skipped" and exits non-zero if any step failed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTally } from './conformance-report.mjs';

const npx = (args) => ['npx', args];
/** The folders the layer check reads. */
const CRUISED = ['src', 'bench', 'scripts'];
const apiOut = join(tmpdir(), `durable-mcp-api-${process.pid}`);
const CONFORMANCE_TALLY = 'test-results/conformance.json';
const steps = [
  ['build', ['npm', ['run', 'build', '--silent']]],
  ['typecheck', npx(['tsc', '-p', 'tsconfig.json', '--noEmit'])],
  ['lint', npx(['eslint', '.'])],
  ['format', npx(['prettier', '--check', '.', '--log-level', 'warn'])],
  // The layers of src/, and no import cycle in src/, bench/ or scripts/ (scripts/layers.mjs).
  ['layers', npx(['depcruise', ...CRUISED, '--config', '.dependency-cruiser.mjs', '--output-type', 'err'])],
  // The API reference, rendered into a temporary folder: a broken link or a type that the exports reference but do
  // not include fails it. Then every ```ts block of README.md and docs/*.md, type-checked against dist/.
  ['docs-api', ['npm', ['run', 'docs:api', '--silent', '--', '--out', apiOut]]],
  ['docs-check', ['node', ['scripts/check-docs.mjs']]],
  // No code copied between the two stores (outside their SQL), nor between the operator API, dashboard and CLI.
  ['clones', ['node', ['scripts/check-clones.mjs']]],
  [
    'vitest',
    npx([
      'vitest',
      'run',
      '--reporter=default',
      '--reporter=json',
      '--outputFile.json=test-results/vitest.json',
    ]),
  ],
  // Every test docs/lesson.md names ran and passed (read from the results above).
  ['lesson', ['node', ['scripts/check-lesson.mjs']]],
];
// The benchmark at smoke size (bench/run.ts --smoke, under a minute): every section runs and yields its rows, nothing
// is measured or compared; results in test-results/bench-smoke/. Bounded at 5 minutes as a whole.
steps.push(['bench-smoke', ['npx', ['tsx', 'bench/run.ts', '--smoke']], { capture: true, timeout: 300_000 }]);
// The reliability suite (scripts/chaos/run.ts --ci, about 2½ minutes): its PostgreSQL sections skip with a printed reason
// when PostgreSQL is unreachable, except with CI=true, where they fail (as the PostgreSQL unit tests do). So do the
// benchmark's.
steps.push(['chaos', ['npx', ['tsx', 'scripts/chaos/run.ts', '--ci']], { capture: true }]);
const skipConformance = process.env.DURABLE_MCP_SKIP_CONFORMANCE === '1' && process.env.CI !== 'true';
if (!skipConformance) {
  // Every scenario counts as a test, passed, failed or skipped (the suite skips some): read from its --json file.
  steps.push(['conformance', ['node', ['scripts/conformance.mjs', '--json', CONFORMANCE_TALLY]]]);
  steps.push(['conformance-client', ['node', ['scripts/conformance-client.mjs']]]);
}

mkdirSync('test-results', { recursive: true });
rmSync('test-results/vitest.json', { force: true });
rmSync(CONFORMANCE_TALLY, { force: true });
const failedSteps = [];
/** The sections of the captured steps (bench-smoke, chaos), each counted as one test. */
const sections = { passed: 0, failed: 0, skipped: 0 };
for (const [name, [cmd, args], options = {}] of steps) {
  console.log(`\n== ${name}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, {
    stdio: options.capture ? ['ignore', 'pipe', 'inherit'] : 'inherit',
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
  });
  if (r.error !== undefined) console.log(`${name}: ${r.error.message}`);
  if (options.capture) {
    process.stdout.write(r.stdout ?? '');
    // One line per section: "ok   <id> …", "FAIL <id> …" or "skip <id> …".
    let failedHere = 0;
    for (const m of (r.stdout ?? '').matchAll(/^(ok {2}|FAIL|skip) (\S+)/gm)) {
      if (m[1] === 'FAIL') failedHere += 1;
      else if (m[1] === 'skip') sections.skipped += 1;
      else sections.passed += 1;
    }
    if (r.status !== 0 && failedHere === 0) failedHere += 1; // it stopped before reporting a failed section
    sections.failed += failedHere;
  }
  if (r.status !== 0) {
    failedSteps.push(name);
    if (!['vitest', 'lesson', 'bench-smoke', 'chaos', 'conformance', 'conformance-client'].includes(name))
      break;
  }
}

rmSync(apiOut, { recursive: true, force: true });

let passed = 0;
let failed = 0;
let skipped = 0;
if (existsSync('test-results/vitest.json')) {
  const report = JSON.parse(readFileSync('test-results/vitest.json', 'utf8'));
  passed = report.numPassedTests;
  failed = report.numFailedTests;
  skipped = report.numPendingTests + report.numTodoTests;
}
passed += sections.passed;
failed += sections.failed;
skipped += sections.skipped;
if (skipConformance) console.log('\nconformance skipped (DURABLE_MCP_SKIP_CONFORMANCE=1)');
else {
  const conformance = readTally(CONFORMANCE_TALLY);
  if (conformance !== undefined) {
    passed += conformance.passed;
    failed += conformance.failed;
    skipped += conformance.skipped;
  } else if (failedSteps.includes('conformance')) failed += 1; // it stopped before counting
  if (failedSteps.includes('conformance-client')) failed += 1;
  else if (failedSteps.length === 0) passed += 1;
}
if (failedSteps.length > 0) console.log(`\nfailed steps: ${failedSteps.join(', ')}`);
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failedSteps.length === 0 && failed === 0 ? 0 : 1);
