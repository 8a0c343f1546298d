// After the test suite: every test docs/lesson.md names ran and passed (read from test-results/vitest.json). A test of
// a contract file runs once per store; each of its runs must pass.
import { existsSync, readFileSync } from 'node:fs';
import { isContract, lessonRefs, titleMatches } from './lesson-refs.mjs';

const results = 'test-results/vitest.json';
if (!existsSync(results)) {
  console.error(`lesson: ${results} is missing (run vitest with its JSON reporter first)`);
  process.exit(1);
}
const report = JSON.parse(readFileSync(results, 'utf8'));
const refs = lessonRefs(readFileSync('docs/lesson.md', 'utf8'));
const problems = [];
for (const ref of refs) {
  const runs = report.testResults
    .filter((file) => isContract(ref.file) || file.name.replaceAll('\\', '/').endsWith(`/${ref.file}`))
    .flatMap((file) => file.assertionResults)
    .filter((test) => titleMatches(ref.title, test.title));
  const failing = runs.filter((test) => test.status !== 'passed');
  if (runs.length === 0) problems.push(`${ref.file} › "${ref.title}": did not run`);
  else if (failing.length > 0)
    problems.push(`${ref.file} › "${ref.title}": ${failing.map((t) => t.status).join(', ')}`);
}
if (problems.length > 0) {
  console.error(`lesson: ${problems.length} of the ${refs.length} tests docs/lesson.md names did not pass:`);
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
console.log(`lesson: all ${refs.length} tests docs/lesson.md names ran and passed`);
