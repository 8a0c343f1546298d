// Runs the official MCP conformance suite against our server on a free loopback port.
// Usage: npm run conformance [-- --scenario NAME]   (exit code non-zero if any scored scenario fails)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SUITE = '@modelcontextprotocol/conformance@0.2.0-alpha.12';
// Extension scenarios are not scored by --requirements; each runs on its own so a failure fails the run.
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
  const ok = r.status === 0;
  console.log(`conformance ${label}: ${ok ? 'PASS' : `FAIL (exit ${r.status ?? r.signal})`}`);
  return ok;
}

const { child, url } = await startServer();
let failures = 0;
try {
  if (only) {
    if (!runSuite(url, ['--scenario', only], only)) failures++;
  } else {
    if (!runSuite(url, ['--requirements', '2026-07-28'], 'requirements-2026-07-28')) failures++;
    // Legacy 2025-11-25 clients are served on the same endpoint (src/legacy/).
    if (!runSuite(url, ['--requirements', '2025-11-25'], 'requirements-2025-11-25')) failures++;
    for (const scenario of TASK_SCENARIOS) if (!runSuite(url, ['--scenario', scenario], scenario)) failures++;
  }
} finally {
  child.kill('SIGTERM');
  rmSync(work, { recursive: true, force: true });
}
console.log(failures === 0 ? 'conformance: all runs passed' : `conformance: ${failures} run(s) failed`);
process.exit(failures === 0 ? 0 : 1);
