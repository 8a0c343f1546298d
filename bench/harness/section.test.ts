// A section's rows: one that fails (its setup, or a run in a later round) is reported with its stage and error,
// and the other rows of the section are measured all the same. Runs the raw SQLite baseline child for real.
import { afterAll, describe, expect, it } from 'vitest';
import { parseParams } from '../options.js';
import { RAW_INSERT } from '../sections/names.js';
import { rawInsertRow } from '../sections/tasks-sqlite.js';
import type { RawScenario, ThroughputSample } from '../types.js';
import { makeWorkDir, removeWorkDirs, stopAll } from './processes.js';
import { measureSection } from './section.js';

const sampleOf = (ok: number): ThroughputSample => ({
  rps: ok,
  p50: 1,
  p99: 1,
  ok,
  non2xx: 0,
  errors: 0,
  timeouts: 0,
  seconds: 1,
});

afterAll(async () => {
  await stopAll();
  removeWorkDirs();
});

describe('bench section', () => {
  it('reports a row whose setup throws and one whose second round throws, and measures the others', async () => {
    let flakyRuns = 0;
    const flaky: RawScenario = {
      name: 'flaky row',
      server: 'sqlite',
      baseline: RAW_INSERT,
      // Its pre-flight run and first round pass; its second round throws.
      run: async () => {
        flakyRuns += 1;
        if (flakyRuns === 3) throw new Error('lost the disk');
        return sampleOf(10);
      },
    };
    const noSetup: RawScenario = {
      name: 'row without its setup',
      server: 'sqlite',
      baseline: null,
      setup: () => {
        throw new Error('setup failed');
      },
      run: async () => sampleOf(1),
    };
    const params = parseParams(['--rounds', '2', '--duration', '1', '--warmup', '0']);
    const ctx = {
      workDir: makeWorkDir(),
      cpuProf: undefined,
      pg: { skipped: 'not in this test' },
      started: [],
    };
    const section = { id: 'mixed', title: 'Mixed', rows: [rawInsertRow, flaky, noSetup] };

    const outcome = await measureSection(section, { params, ctx }, [], new AbortController().signal);

    expect(outcome.failed).toEqual([
      { name: 'row without its setup', section: 'mixed', stage: 'setup', error: 'setup failed' },
      { name: 'flaky row', section: 'mixed', stage: 'round 2', error: 'lost the disk' },
    ]);
    expect(outcome.rows.map((r) => r.name)).toEqual([RAW_INSERT]);
    const raw = outcome.rows[0]!;
    expect(raw.kind === undefined && raw.samples.map((s) => s.round)).toEqual([1, 2]);
    expect(raw.kind === undefined && raw.median.rps).toBeGreaterThan(0);
  });
});
