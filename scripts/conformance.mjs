// Runs the official MCP conformance suite against our server on a free loopback port, and reports every scenario as
// passed, failed or skipped (scripts/conformance-report.mjs reads what the suite wrote).
// Usage: npm run conformance [-- --scenario NAME] [-- --json FILE]   (exit code non-zero if any scenario fails;
// skipped ones are printed and counted as skipped; --json writes the counts for `npm test`)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatRun, readRun, summariseRun, tallyLine, tallyOf, writeTally } from './conformance-report.mjs';

const SUITE = '@modelcontextprotocol/conformance@0.2.0-alpha.12';
// Extension scenarios are not scored by --requirements (its exit status ignores them); each also runs on its own, so
// that a run of its own says how it ended.
export const TASK_SCENARIOS = [
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-mrtr-input',
  'tasks-request-headers',
  'tasks-dispatch-and-envelope',
  'tasks-status-notifications',
  'tasks-required-task-error',
  'tasks-mrtr-composition',
];

const args = process.argv.slice(2);
const only = args.includes('--scenario') ? args[args.indexOf('--scenario') + 1] : undefined;
const jsonFile = args.includes('--json') ? args[args.indexOf('--json') + 1] : undefined;
const work = mkdtempSync(join(tmpdir(), 'durable-mcp-conformance-'));

function startServer() {
  const child = spawn(
    process.execPath,
    [
      'bin/durable-mcp.js',
      'serve',
      '--port',
      '0',
      '--tools',
      'conformance',
      '--store',
      join(work, 'tasks.db'),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('server did not start within 20 s')), 20_000);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1] });
      }
    });
    child.on('exit', (code) => reject(new Error(`server exited early with ${code}`)));
  });
}

function runSuite(url, extra, label) {
  const outDir = join(work, label.replace(/[^a-z0-9-]/gi, '_'));
  const r = spawnSync(
    'npx',
    ['-y', '-p', 'node@22', '-p', SUITE, 'conformance', 'server', '--url', url, '-o', outDir, ...extra],
    { stdio: 'inherit', timeout: 15 * 60_000, env: { ...process.env, NO_COLOR: '1' } },
  );
  const run = summariseRun(label, r.status ?? r.signal, readRun(outDir));
  console.log(formatRun(run).join('\n'));
  return run;
}

const { child, url } = await startServer();
const runs = [];
try {
  if (only) {
    runs.push(runSuite(url, ['--scenario', only], only));
  } else {
    runs.push(runSuite(url, ['--requirements', '2026-07-28'], 'requirements-2026-07-28'));
    // Legacy 2025-11-25 clients are served on the same endpoint (src/legacy/).
    runs.push(runSuite(url, ['--requirements', '2025-11-25'], 'requirements-2025-11-25'));
    for (const scenario of TASK_SCENARIOS) runs.push(runSuite(url, ['--scenario', scenario], scenario));
  }
} finally {
  child.kill('SIGTERM');
  rmSync(work, { recursive: true, force: true });
}
const tally = tallyOf(runs);
if (jsonFile) writeTally(jsonFile, tally);
console.log('');
for (const run of runs) console.log(formatRun(run)[0]);
console.log(tallyLine(tally));
process.exit(tally.failed === 0 ? 0 : 1);
