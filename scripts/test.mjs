// `npm test`: build, typecheck, lint, cycle check, unit + e2e tests, then the official conformance suite.
// Prints one closing line "tests: N passed, N failed, N skipped" and exits non-zero if any step failed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';

const npx = (args) => ['npx', args];
const steps = [
  ['build', ['npm', ['run', 'build', '--silent']]],
  ['typecheck', npx(['tsc', '-p', 'tsconfig.json', '--noEmit'])],
  ['lint', npx(['eslint', '.'])],
  ['format', npx(['prettier', '--check', '.', '--log-level', 'warn'])],
  ['cycles', npx(['madge', '--circular', '--extensions', 'ts', '--ts-config', 'tsconfig.json', 'src'])],
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
];
const skipConformance = process.env.DURABLE_MCP_SKIP_CONFORMANCE === '1' && process.env.CI !== 'true';
if (!skipConformance) {
  steps.push(['conformance', ['node', ['scripts/conformance.mjs']]]);
  steps.push(['conformance-client', ['node', ['scripts/conformance-client.mjs']]]);
}

mkdirSync('test-results', { recursive: true });
rmSync('test-results/vitest.json', { force: true });
const failedSteps = [];
for (const [name, [cmd, args]] of steps) {
  console.log(`\n== ${name}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.status !== 0) {
    failedSteps.push(name);
    if (!['vitest', 'conformance', 'conformance-client'].includes(name)) break;
  }
}

let passed = 0;
let failed = 0;
let skipped = 0;
if (existsSync('test-results/vitest.json')) {
  const report = JSON.parse(readFileSync('test-results/vitest.json', 'utf8'));
  passed = report.numPassedTests;
  failed = report.numFailedTests;
  skipped = report.numPendingTests + report.numTodoTests;
}
if (skipConformance) console.log('\nconformance skipped (DURABLE_MCP_SKIP_CONFORMANCE=1)');
else
  for (const suite of ['conformance', 'conformance-client']) {
    if (failedSteps.includes(suite)) failed += 1;
    else if (failedSteps.length === 0) passed += 1;
  }
if (failedSteps.length > 0) console.log(`\nfailed steps: ${failedSteps.join(', ')}`);
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failedSteps.length === 0 && failed === 0 ? 0 : 1);
