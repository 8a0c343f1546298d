// What a run of the conformance suite says, read from the files it writes (one checks.json per scenario, in a
// folder named after it): each scenario passed, failed, or was skipped (the suite skipped it, or none of its checks
// applied: 0 of 0), and the run's verdict and counts, as `npm run conformance` prints them and `npm test` adds them up.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const FOLDER = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;
const NOTE_MAX = 200;
// Terminal escape sequences (CSI, and OSC up to its terminator) and every other control character.
// eslint-disable-next-line no-control-regex
const CONTROL = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)?|[\x00-\x1f\x7f-\x9f]/g;

/** Text from the suite (or from the server under test, through it) made safe to print on one terminal line. */
export function printable(text) {
  const flat = String(text ?? '')
    .replace(CONTROL, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return flat.length > NOTE_MAX ? `${flat.slice(0, NOTE_MAX - 1)}…` : flat;
}

/** How one scenario ended, from its checks (SUCCESS, FAILURE, WARNING, SKIPPED, INFO). */
export function scenarioResult(scenario, checks) {
  const having = (status) => checks.filter((check) => check.status === status);
  const failures = having('FAILURE');
  if (failures.length > 0) {
    const first = failures[0];
    return {
      scenario,
      status: 'failed',
      note: printable(`${first.id}: ${first.errorMessage ?? first.description}`),
    };
  }
  const passed = having('SUCCESS').length + having('WARNING').length;
  if (passed > 0) {
    const warnings = having('WARNING').length;
    return { scenario, status: 'passed', note: warnings > 0 ? `${warnings} warning(s)` : '' };
  }
  const skip = having('SKIPPED')[0];
  const info = having('INFO').find((check) => typeof check.details?.message === 'string');
  const why = skip?.description ?? info?.details.message ?? 'no check applied';
  return { scenario, status: 'skipped', note: printable(`0/0 checks: ${why}`) };
}

/** Every scenario of a run, from the folder given to the suite's `-o`, in name order. */
export function readRun(dir) {
  if (!existsSync(dir)) return [];
  const results = [];
  for (const entry of readdirSync(dir).sort()) {
    const file = join(dir, entry, 'checks.json');
    if (!statSync(join(dir, entry)).isDirectory() || !existsSync(file)) continue;
    const scenario = FOLDER.exec(entry)?.[1] ?? entry;
    let checks;
    try {
      checks = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      results.push({ scenario, status: 'failed', note: printable(`unreadable checks.json: ${err}`) });
      continue;
    }
    results.push(
      Array.isArray(checks)
        ? scenarioResult(scenario, checks)
        : { scenario, status: 'failed', note: 'checks.json is not an array' },
    );
  }
  return results;
}

/**
 * A run's verdict: FAIL when a scenario failed, the suite exited non-zero (one failure more if no scenario did) or
 * wrote nothing; SKIPPED when every scenario was skipped; PASS otherwise.
 */
export function summariseRun(label, exit, scenarios) {
  const count = (status) => scenarios.filter((s) => s.status === status).length;
  const run = {
    label,
    scenarios,
    passed: count('passed'),
    failed: count('failed'),
    skipped: count('skipped'),
  };
  if (exit !== 0 && run.failed === 0) {
    run.failed += 1;
    run.problem = `the suite exited with ${exit}`;
  } else if (scenarios.length === 0) {
    run.failed += 1;
    run.problem = 'the suite wrote no checks.json';
  }
  run.verdict = run.failed > 0 ? 'FAIL' : run.passed === 0 ? 'SKIPPED' : 'PASS';
  return run;
}

/** The lines printed for a run: its verdict and counts, then each scenario that did not pass, with why. */
export function formatRun(run) {
  const lines = [
    `conformance ${run.label}: ${run.verdict} (${run.passed} passed, ${run.failed} failed, ${run.skipped} skipped)`,
  ];
  if (run.problem !== undefined) lines.push(`    ${run.problem}`);
  for (const s of run.scenarios)
    if (s.status !== 'passed') lines.push(`    ${s.status} ${printable(s.scenario)}: ${s.note}`);
  return lines;
}

/** The scenarios of all runs, counted. */
export function tallyOf(runs) {
  const sum = (key) => runs.reduce((n, run) => n + run[key], 0);
  return { passed: sum('passed'), failed: sum('failed'), skipped: sum('skipped') };
}

export const tallyLine = (t) => `conformance: ${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped`;

/** The counts for `npm test`, in a file (`--json FILE`). */
export function writeTally(file, tally) {
  writeFileSync(file, `${JSON.stringify(tally)}\n`);
}

/** The counts a run wrote, or undefined when it wrote none (it did not run, or stopped before the end). */
export function readTally(file) {
  if (!existsSync(file)) return undefined;
  const t = JSON.parse(readFileSync(file, 'utf8'));
  return { passed: Number(t.passed), failed: Number(t.failed), skipped: Number(t.skipped) };
}
