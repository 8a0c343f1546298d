// How the conformance step reports a run, from what the suite wrote: fixtures are the suite's own files
// (0.2.0-alpha.12 against this server), among them the scenario it skips, tasks-status-notifications.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  formatRun,
  printable,
  readRun,
  summariseRun,
  tallyLine,
  tallyOf,
} from '../scripts/conformance-report.mjs';

const FIXTURES = fileURLToPath(new URL('./fixtures/conformance/', import.meta.url));
const temp: string[] = [];

afterAll(() => {
  for (const dir of temp) rmSync(dir, { recursive: true, force: true });
});

/** A run folder as the suite writes it, with one scenario's checks. */
function runFolder(scenario: string, checks: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-conformance-report-'));
  temp.push(dir);
  mkdirSync(join(dir, `server-${scenario}-2026-12-06T02-55-35-938Z`));
  writeFileSync(
    join(dir, `server-${scenario}-2026-12-06T02-55-35-938Z`, 'checks.json'),
    JSON.stringify(checks),
  );
  return dir;
}

describe('the conformance report', () => {
  it('counts and prints a scenario the suite skipped as skipped, which does not fail the run', () => {
    // The suite exits 0 and prints "Passed: 0/0" for it.
    const scenarios = readRun(join(FIXTURES, 'tasks-status-notifications'));
    expect(scenarios).toEqual([
      {
        scenario: 'tasks-status-notifications',
        status: 'skipped',
        note: '0/0 checks: Status notifications conformance, pending subscriptions/listen rewrite.',
      },
    ]);
    const run = summariseRun('tasks-status-notifications', 0, scenarios);
    expect(run).toMatchObject({ verdict: 'SKIPPED', passed: 0, failed: 0, skipped: 1 });
    expect(formatRun(run)).toEqual([
      'conformance tasks-status-notifications: SKIPPED (0 passed, 0 failed, 1 skipped)',
      '    skipped tasks-status-notifications: 0/0 checks: Status notifications conformance, pending subscriptions/listen rewrite.',
    ]);
    expect(tallyLine(tallyOf([run]))).toBe('conformance: 0 passed, 0 failed, 1 skipped');
  });

  it('passes a run with passing scenarios and counts one where no check applied as skipped', () => {
    const scenarios = readRun(join(FIXTURES, 'requirements-2025-11-25'));
    expect(scenarios.map((s) => [s.scenario, s.status])).toEqual([
      ['ping', 'passed'],
      ['server-sse-polling', 'skipped'],
    ]);
    expect(scenarios[1]?.note).toMatch(/^0\/0 checks: Server returned JSON instead of SSE stream/);
    const run = summariseRun('requirements-2025-11-25', 0, scenarios);
    expect(formatRun(run)[0]).toBe(
      'conformance requirements-2025-11-25: PASS (1 passed, 0 failed, 1 skipped)',
    );
    const skipped = summariseRun(
      'tasks-status-notifications',
      0,
      readRun(join(FIXTURES, 'tasks-status-notifications')),
    );
    expect(tallyOf([run, skipped])).toEqual({ passed: 1, failed: 0, skipped: 2 });
  });

  it('fails on a failing check, on a suite that exits non-zero, and on a run that wrote nothing', () => {
    const failing = readRun(
      runFolder('tools-list', [
        { id: 'tools-list', status: 'SUCCESS' },
        { id: 'wire-schema-valid', status: 'FAILURE', errorMessage: 'bad \x1b[31mframe\x1b[0m\nnext' },
      ]),
    );
    expect(failing).toEqual([
      { scenario: 'tools-list', status: 'failed', note: 'wire-schema-valid: bad frame next' },
    ]);
    expect(summariseRun('x', 1, failing)).toMatchObject({ verdict: 'FAIL', failed: 1 });
    const crashed = summariseRun('x', 'SIGTERM', readRun(join(FIXTURES, 'requirements-2025-11-25')));
    expect(crashed).toMatchObject({
      verdict: 'FAIL',
      passed: 1,
      failed: 1,
      problem: 'the suite exited with SIGTERM',
    });
    const nothing = summariseRun('x', 0, readRun(join(FIXTURES, 'missing')));
    expect(formatRun(nothing)).toEqual([
      'conformance x: FAIL (0 passed, 1 failed, 0 skipped)',
      '    the suite wrote no checks.json',
    ]);
  });

  it('prints what the suite or the server wrote on one line, without terminal control sequences, bounded', () => {
    expect(printable('a\x1b]0;title\x07b\r\n\x1b[2Jc\x00')).toBe('a b c');
    expect(printable('x'.repeat(1_000))).toHaveLength(200);
  });
});
