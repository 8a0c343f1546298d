// Runs the official MCP conformance suite in client mode against our everything client, one scenario at a time:
// every client scenario the 2026-07-28 requirements score (the OAuth ones included), plus the client credentials
// extension scenarios. Exit code non-zero if any fails, warns or is skipped.
// Usage: npm run conformance:client [-- --scenario NAME ...] [-- --verbose] [-- -o DIR]
// (expects a build: dist/examples/conformance-client/everything-client.js)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SUITE = '@modelcontextprotocol/conformance@0.2.0-alpha.12';
const REVISION = '2026-07-28';
const CLIENT = 'dist/examples/conformance-client/everything-client.js';
// What `conformance list --client --requirements 2026-07-28` gives (checked at run time).
const EXPECTED_SCENARIOS = [
  'tools_call',
  'request-metadata',
  'sep-2322-client-request-state',
  'http-standard-headers',
  'http-custom-headers',
  'http-invalid-tool-headers',
  'json-schema-ref-no-deref',
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/basic-cimd',
  'auth/scope-from-www-authenticate',
  'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined',
  'auth/scope-step-up',
  'auth/scope-retry-limit',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none',
  'auth/pre-registration',
  'auth/resource-mismatch',
  'auth/offline-access-scope',
  'auth/offline-access-not-supported',
  'auth/authorization-server-migration',
  'auth/iss-supported',
  'auth/iss-not-advertised',
  'auth/iss-supported-missing',
  'auth/iss-wrong-issuer',
  'auth/iss-unexpected',
  'auth/iss-normalized',
  'auth/metadata-issuer-mismatch',
];
// Extension scenarios (not scored for 2026-07-28, run all the same) need `--force`: at `--spec-version 2026-07-28`
// the suite skips them as not applicable, and without a version it runs them on the 2025-11-25 stateful wire.
const EXTENSION_SCENARIOS = ['auth/client-credentials-basic', 'auth/client-credentials-jwt'];

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const verbose = args.includes('--verbose');
const only = args.flatMap((a, i) => (a === '--scenario' && args[i + 1] ? [args[i + 1]] : []));
const outArg = args.includes('-o') ? args[args.indexOf('-o') + 1] : undefined;
const env = { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' };
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;

function suite(suiteArgs, timeoutMs) {
  return spawnSync('npx', ['-y', '-p', 'node@22', '-p', SUITE, 'conformance', ...suiteArgs], {
    cwd: root,
    env,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: timeoutMs,
  });
}

/** The scored client scenarios, from the suite itself. */
function requiredScenarios() {
  const r = suite(['list', '--client', '--requirements', REVISION], 5 * 60_000);
  if (r.status !== 0) throw new Error(`conformance list failed (exit ${r.status ?? r.signal}):\n${r.stderr}`);
  const lines = r.stdout.split('\n');
  const start = lines.findIndex((l) => /^Client scenarios/.test(l.trim()));
  if (start < 0) throw new Error(`unexpected conformance list output:\n${r.stdout}`);
  const names = [];
  for (const line of lines.slice(start + 1)) {
    const m = /^\s*-\s+(\S+)\s*$/.exec(line);
    if (m === null) break;
    names.push(m[1]);
  }
  return names;
}

function findChecks(dir) {
  const found = [];
  for (const entry of readdirSync(dir)) {
    const p = join(dir, entry);
    if (statSync(p).isDirectory()) found.push(...findChecks(p));
    else if (entry === 'checks.json') found.push(p);
  }
  return found;
}

function runScenario(scenario, outDir) {
  const started = Date.now();
  const version = [
    '--spec-version',
    REVISION,
    ...(EXTENSION_SCENARIOS.includes(scenario) ? ['--force'] : []),
  ];
  const r = suite(
    ['client', '--command', `node ${CLIENT}`, '--scenario', scenario, ...version, '-o', outDir],
    5 * 60_000,
  );
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  const problems = [];
  if (r.status !== 0) problems.push(`suite exit ${r.status ?? r.signal}`);
  if (/SKIPPED: scenario/.test(output)) problems.push('scenario skipped as not applicable');
  const files = existsSync(outDir) ? findChecks(outDir) : [];
  if (files.length === 0) problems.push('no checks.json written');
  for (const file of files) {
    const checks = JSON.parse(readFileSync(file, 'utf8'));
    // A scenario whose checks were all skipped "passes" with 0/0: it was not run.
    if (checks.length === 0 || checks.every((c) => c.status === 'SKIPPED'))
      problems.push('every check skipped: the scenario did not run');
    for (const check of checks) {
      if (check.status === 'FAILURE' || check.status === 'WARNING') {
        problems.push(
          `${check.status} ${check.id} (${check.name}): ${check.errorMessage ?? check.description}`,
        );
      }
    }
  }
  return { ok: problems.length === 0, problems, output, seconds: (Date.now() - started) / 1000 };
}

if (!existsSync(join(root, CLIENT))) {
  console.error(`${CLIENT} is missing: run "npm run build" first`);
  process.exit(2);
}

let scenarios;
if (only.length > 0) {
  scenarios = only;
} else {
  scenarios = requiredScenarios();
  if (scenarios.length === 0) {
    console.error('conformance list returned no client scenarios');
    process.exit(2);
  }
  const missing = EXPECTED_SCENARIOS.filter((s) => !scenarios.includes(s));
  const extra = scenarios.filter((s) => !EXPECTED_SCENARIOS.includes(s));
  if (missing.length > 0 || extra.length > 0) {
    console.log(
      `note: scored client scenarios changed (missing: ${missing.join(', ') || '-'}; new: ${extra.join(', ') || '-'})`,
    );
  }
  scenarios.push(...EXTENSION_SCENARIOS.filter((s) => !scenarios.includes(s)));
}

const work =
  outArg === undefined ? mkdtempSync(join(tmpdir(), 'durable-mcp-conformance-client-')) : resolve(outArg);
console.log(`client conformance (${SUITE}, ${REVISION}): ${scenarios.length} scenarios; results in ${work}`);
const failed = [];
for (const scenario of scenarios) {
  const result = runScenario(scenario, join(work, scenario.replace(/[^a-z0-9_-]/gi, '_')));
  console.log(`${result.ok ? 'PASS' : 'FAIL'} ${scenario} (${result.seconds.toFixed(1)} s)`);
  if (!result.ok) {
    failed.push(scenario);
    for (const p of result.problems) console.log(`    ${p}`);
  }
  if (verbose || !result.ok) {
    const text = result.output.replace(ANSI, '').replace(/^npm warn.*\n/gm, '');
    console.log(text.replace(/^/gm, '    | '));
  }
}
const passed = scenarios.length - failed.length;
console.log(
  `\nclient conformance: ${passed}/${scenarios.length} passed` +
    (failed.length > 0 ? `, ${failed.length} failed: ${failed.join(', ')}` : ''),
);
if (failed.length === 0 && outArg === undefined) rmSync(work, { recursive: true, force: true });
else if (failed.length > 0) console.log(`results kept in ${work}`);
process.exit(failed.length === 0 ? 0 : 1);
