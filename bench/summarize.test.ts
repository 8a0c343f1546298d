// Throughput targets: a target on ops/s against another row (at least `min`), and one on CPU µs/op (at most
// `maxCpu`), each met, not met, or not measured when a figure is missing; the table shows which.
import { describe, expect, it } from 'vitest';
import { summarize } from './summarize.js';
import { throughputTable } from './tables/throughput.js';
import type { ThroughputRow } from './types-rows.js';
import type { HttpScenario, Rounded, Sample } from './types.js';

const row = (name: string, targets?: HttpScenario['targets']): HttpScenario => ({
  name,
  server: 'ours',
  baseline: null,
  request: () => ({ method: 'POST' }),
  ...(targets === undefined ? {} : { targets }),
});

const sample = (rps: number, cpuUs: number | null): Rounded<Sample> => ({
  round: 1,
  rps,
  p50: 1,
  p99: 2,
  cpuUs,
  ok: rps,
  non2xx: 0,
  errors: 0,
  timeouts: 0,
  seconds: 1,
});

/** Summarises `rows`, each measured once at the given ops/s and CPU µs/op. */
function rate(rows: Array<[HttpScenario, number, number | null]>): ThroughputRow[] {
  const samples = new Map(rows.map(([s, rps, cpu]) => [s.name, [sample(rps, cpu)]]));
  return summarize(
    rows.map(([s]) => s),
    samples,
  ) as ThroughputRow[];
}

describe('bench throughput targets', () => {
  it('meets a CPU target at most maxCpu × the other row, and misses it above', () => {
    const rows = rate([
      [row('serve'), 1000, 100],
      [row('cheap', [{ vs: 'serve', maxCpu: 1.2 }]), 900, 120],
      [row('costly', [{ vs: 'serve', maxCpu: 1.2 }]), 2000, 121],
    ]);
    expect(rows[1]!.targets).toEqual([{ vs: 'serve', maxCpu: 1.2, ratio: 1.2, met: true }]);
    // Its ops/s are twice the other's; the CPU target looks at CPU only.
    expect(rows[2]!.targets).toEqual([{ vs: 'serve', maxCpu: 1.2, ratio: 1.21, met: false }]);
    const table = throughputTable(rows).join('\n');
    expect(table).toContain("CPU µs/op ≤ 1.2 × serve's: **met** (1.20 ×)");
    expect(table).toContain("CPU µs/op ≤ 1.2 × serve's: **not met** (1.21 ×)");
  });

  it('leaves a CPU target unmeasured without CPU figures, and rates an ops/s target beside it', () => {
    const rows = rate([
      [row('no cpu'), 1000, null],
      [
        row('gateway', [
          { vs: 'no cpu', maxCpu: 1.2 },
          { vs: 'no cpu', min: 0.5 },
        ]),
        400,
        50,
      ],
    ]);
    expect(rows[1]!.targets).toEqual([
      { vs: 'no cpu', maxCpu: 1.2, ratio: null, met: null },
      { vs: 'no cpu', min: 0.5, ratio: 0.4, met: false },
    ]);
    const table = throughputTable(rows).join('\n');
    expect(table).toContain("CPU µs/op ≤ 1.2 × no cpu's: not measured; ≥ 0.5 × no cpu: **not met**");
  });
});

describe("bench pg rows' CPU figures", () => {
  it('are medians over rounds, null when a round lacks one, and noted under the table', () => {
    const pg = row('ours pg tasks/get, 1 replica');
    const figures = (pgCpuUs: number | null, busyCores: number) => ({
      ...sample(1000, 100),
      xactsPerOp: 0,
      pgCpuUs,
      pgAllCpuUs: 90,
      loadCpuUs: 40,
      kernelUs: 10,
      busyCores,
      otherCores: 0.5,
    });
    const [withAll] = summarize(
      [pg],
      new Map([[pg.name, [figures(30, 1.9), figures(50, 2), figures(40, 1.8)]]]),
    ) as ThroughputRow[];
    expect(withAll!.median).toMatchObject({ pgCpuUs: 40, busyCores: 1.9, loadCpuUs: 40, otherCores: 0.5 });
    const [missing] = summarize(
      [pg],
      new Map([[pg.name, [figures(30, 2), figures(null, 2)]]]),
    ) as ThroughputRow[];
    expect(missing!.median.pgCpuUs).toBeNull();
    const table = throughputTable([withAll!]).join('\n');
    expect(table).toContain(
      'ours pg tasks/get, 1 replica: server 100.0 µs, PostgreSQL 40.0 µs, (every postgres process 90.0 µs), ' +
        'load generator 40.0 µs, kernel interrupts 10.0 µs per operation; cores busy 1.90, of which other work 0.50.',
    );
    // Without /proc the rounds hold nulls: the note says so.
    const blank = { pgCpuUs: null, pgAllCpuUs: null, loadCpuUs: null, kernelUs: null, busyCores: null };
    const noProc = { ...sample(1000, null), xactsPerOp: null, ...blank, otherCores: null, windowS: null };
    const [bare] = summarize([pg], new Map([[pg.name, [noProc]]])) as ThroughputRow[];
    expect(bare!.median.busyCores).toBeNull();
    expect(throughputTable([bare!]).join('\n')).toContain(
      'ours pg tasks/get, 1 replica: no CPU figures (no /proc); cores busy: unknown (no /proc/stat).',
    );
    // Rows that measure none of them get none.
    const [plain] = rate([[row('plain'), 1000, 100]]);
    expect('pgCpuUs' in plain!.median).toBe(false);
  });
});
