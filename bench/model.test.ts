// The capacity model's computation: its bounds, which one binds, and its verdict on a row (costs from the row or
// from another run, the notes on a loaded machine or on cores left idle).
import { describe, expect, it } from 'vitest';
import { judgeReport, judgeRow, predict, verdictTable } from './model.js';
import type { Report } from './report-types.js';
import { RAW_PG_NOTIFY } from './sections/names.js';
import type { ThroughputRow } from './types-rows.js';

const row = (name: string, rps: number, median: Partial<ThroughputRow['median']>): ThroughputRow => ({
  name,
  server: 'ours-pg1',
  baseline: null,
  unit: '2xx responses/s',
  samples: [],
  median: { rps, p50: 1, p99: 2, cpuUs: null, writtenKb: null, ...median },
  min: { rps },
  max: { rps },
  non2xx: 0,
  errors: 0,
});

describe('capacity model', () => {
  it('is the least of the replica bound and the cores left by other work', () => {
    const p = predict({ replicas: 1, cores: 2, s: 200, p: 100, a: 50, k: 50, otherCores: 0 });
    expect(p.replicaBound).toBe(5000);
    expect(p.coresBound).toBe(5000); // 2 × 10⁶ / 400
    expect(p.quietCoresBound).toBe(5000);
    const loaded = predict({ replicas: 1, cores: 2, s: 200, p: 100, a: 50, k: 50, otherCores: 1 });
    expect(loaded.coresBound).toBe(2500);
    expect(loaded.quietCoresBound).toBe(5000);
    expect(loaded).toMatchObject({ predicted: 2500, bound: 'cores' });
  });

  it('binds on the replica when its one core runs out first', () => {
    const p = predict({ replicas: 1, cores: 8, s: 250, p: 50, a: 0, k: 0, otherCores: 0 });
    expect(p).toMatchObject({ replicaBound: 4000, coresBound: 8e6 / 300, predicted: 4000, bound: 'replica' });
    // Three replicas: s is their sum per operation, each takes a third of the operations.
    expect(predict({ replicas: 3, cores: 8, s: 250, p: 50, a: 0, k: 0, otherCores: 0 }).replicaBound).toBe(
      12000,
    );
  });

  it('binds creation on its notifying commits only when given, at 500 tasks a batch', () => {
    const m = { replicas: 1, cores: 2, s: 200, p: 100, a: 50, k: 50, otherCores: 0 };
    expect(predict(m).commitBound).toBeNull();
    expect(predict({ ...m, notifyingCommits: 4 })).toMatchObject({ commitBound: 2000, bound: 'commits' });
  });

  it('binds creation at the tasks per commit the row made, never more than a batch holds', () => {
    const m = { replicas: 1, cores: 2, s: 200, p: 100, a: 50, k: 50, otherCores: 0, notifyingCommits: 250 };
    expect(predict({ ...m, tasksPerCommit: 16 })).toMatchObject({ commitBound: 4000, bound: 'commits' });
    expect(predict({ ...m, tasksPerCommit: 40 })).toMatchObject({ commitBound: 10000, bound: 'replica' });
    expect(predict({ ...m, tasksPerCommit: 5000 }).commitBound).toBe(125000);
  });

  it('binds creation on its batch pipeline: K batches in flight per replica, each of b′ creations per round trip', () => {
    const m = { replicas: 1, cores: 8, s: 50, p: 50, a: 0, k: 0, otherCores: 0 };
    expect(predict(m).pipelineBound).toBeNull();
    // 2 batches of 16 every 4 ms: 8,000/s, below the replica's 20,000/s.
    expect(predict({ ...m, pipeline: { batchTasks: 16, batchMs: 4 } })).toMatchObject({
      pipelineBound: 8000,
      predicted: 8000,
      bound: 'pipeline',
    });
    // Each replica has its own pipeline.
    expect(predict({ ...m, replicas: 3, pipeline: { batchTasks: 16, batchMs: 4 } }).pipelineBound).toBe(
      24000,
    );
    // A round trip of no length bounds nothing.
    expect(predict({ ...m, pipeline: { batchTasks: 16, batchMs: 0 } }).pipelineBound).toBeNull();
  });

  it('leaves no core for the row when other work took them all', () => {
    const p = predict({ replicas: 1, cores: 2, s: 200, p: 100, a: 50, k: 50, otherCores: 2.3 });
    expect(p).toMatchObject({ coresBound: 0, predicted: 0 });
  });
});

describe("the model's verdict on a bench row", () => {
  const costs = { cpuUs: 200, pgCpuUs: 100, loadCpuUs: 50, kernelUs: 50 };

  it('predicts a pg row from its own costs and says when other work held the cores', () => {
    const v = judgeRow(
      row('ours pg tasks/get, 1 replica', 2000, { ...costs, otherCores: 1.2, busyCores: 2, xactsPerOp: 0 }),
      2,
    )!;
    expect(v.replicas).toBe(1);
    expect(v.prediction!.predicted).toBeCloseTo(2000);
    expect(v.error).toBeCloseTo(0);
    expect(v.notes.join(' ')).toContain('other work took 1.20 of 2 cores');
    expect(v.notes.join(' ')).toContain('on a quiet machine the cores would allow 5000/s');
  });

  it('says when the cores bound binds but the cores were not saturated', () => {
    const v = judgeRow(
      row('ours pg task creation, 3 replicas', 1000, {
        ...costs,
        otherCores: 0,
        busyCores: 1.2,
        xactsPerOp: 0.2,
      }),
      2,
    )!;
    expect(v.replicas).toBe(3);
    expect(v.prediction!.bound).toBe('cores');
    expect(v.error).toBeCloseTo(4);
    expect(v.commitsPerSecond).toBeCloseTo(200);
    expect(v.notes.join(' ')).toContain('cores busy 1.20 of 2: not saturated');
  });

  it('takes the costs from another run when given, the load from the row', () => {
    const other = row('ours pg tasks/get, 1 replica', 9999, { ...costs, cpuUs: 300, otherCores: 0 });
    const v = judgeRow(row('ours pg tasks/get, 1 replica', 1000, { ...costs, otherCores: 1 }), 2, {
      costsFrom: other,
    })!;
    expect(v.costs).toEqual({ s: 300, p: 100, a: 50, k: 50 });
    expect(v.prediction!.predicted).toBe(2000); // 1 core left ÷ 500 µs
  });

  it('predicts each round from its own costs and load, and takes the median', () => {
    const round = (rps: number, cpuUs: number, otherCores: number) => ({
      round: 1,
      rps,
      p50: 1,
      p99: 2,
      ok: rps,
      non2xx: 0,
      errors: 0,
      timeouts: 0,
      seconds: 1,
      ...costs,
      cpuUs,
      otherCores,
      windowS: 1.2,
    });
    const r = row('ours pg tasks/get, 1 replica', 1500, { ...costs, otherCores: 1 });
    // Rounds: 1 core left at 500 µs (2,000/s), 1.5 cores at 500 µs (3,000/s), 1 core at 1,000 µs (1,000/s).
    r.samples = [round(2000, 300, 1), round(3000, 300, 0.5), round(1000, 800, 1)];
    r.median.windowS = 1.2;
    const v = judgeRow(r, 2)!;
    expect(v.prediction!.predicted).toBe(2000);
    expect(v.error).toBeCloseTo(2000 / 1500 - 1);
    expect(v.notes.join(' ')).toContain('the CPU was read over 1.20 s around runs of 1.00 s');
  });

  it("takes n from the same run's notifying-insert row, and b from the creation row's commits per task", () => {
    const creation = row('ours pg task creation, 1 replica', 3000, {
      ...costs,
      cpuUs: 100,
      otherCores: 0,
      busyCores: 1.5,
      xactsPerOp: 0.0625,
    });
    const report = {
      machine: { cores: 2 },
      scenarios: [
        row(RAW_PG_NOTIFY, 200, {}),
        creation,
        row('ours pg tasks/get, 1 replica', 10, { ...costs, otherCores: 0 }),
      ],
    } as unknown as Report;
    const [v, get] = judgeReport(report);
    // 16 tasks a commit × 200 notifying commits/s, below the cores' 2 × 10⁶ / 300 µs.
    expect(v!.prediction).toMatchObject({ commitBound: 3200, predicted: 3200, bound: 'commits' });
    expect(v!.error).toBeCloseTo(3200 / 3000 - 1);
    expect(get!.prediction!.commitBound).toBeNull();
    const given = judgeReport(report, { notifyingCommits: 100 })[0]!;
    expect(given.prediction!.commitBound).toBe(1600);
    const without = judgeReport({ ...report, scenarios: [creation] } as Report)[0]!;
    expect(without.prediction!.commitBound).toBeNull();
    expect(without.notes.join(' ')).toContain('no commit bound');
  });

  it("takes the pipeline from each round's batches, or from --costs's row, and prints them", () => {
    const round = (batchTasks: number, batchMs: number) => ({
      round: 1,
      rps: 1000,
      p50: 1,
      p99: 2,
      ok: 1000,
      non2xx: 0,
      errors: 0,
      timeouts: 0,
      seconds: 1,
      ...costs,
      cpuUs: 100,
      otherCores: 0,
      batchTasks,
      batchMs,
    });
    const creation = row('ours pg task creation, 1 replica', 5000, {
      ...costs,
      cpuUs: 100,
      otherCores: 0,
      batchTasks: 10,
      batchMs: 4,
    });
    // Rounds: 2 × 10 ÷ 4 ms, 2 × 12 ÷ 4 ms, 2 × 9 ÷ 3 ms: 5,000, 6,000 and 6,000/s.
    creation.samples = [round(10, 4), round(12, 4), round(9, 3)];
    const v = judgeRow(creation, 2)!;
    expect(v.prediction).toMatchObject({ pipelineBound: 6000, predicted: 6000, bound: 'pipeline' });
    expect(v.pipeline).toEqual({ batchTasks: 10, batchMs: 4 });
    const table = verdictTable([v], 2).join('\n');
    expect(table).toContain('10.0 creations per batch, 4.00 ms per batch');
    expect(table).toContain('| 6,000 | 6,000 (pipeline) | 5,000 | +20 % |');
    // From another run's row: its batches, whatever this run's rounds say.
    const other = row('ours pg task creation, 1 replica', 1, {
      ...costs,
      cpuUs: 100,
      batchTasks: 20,
      batchMs: 10,
    });
    const cross = judgeRow(creation, 2, { costsFrom: other })!;
    expect(cross.prediction).toMatchObject({ pipelineBound: 4000, predicted: 4000 });
    // A creation row whose replicas reported no batches: no pipeline bound, and a note that says so.
    const bare = judgeRow(row('ours pg task creation, 1 replica', 5000, { ...costs, otherCores: 0 }), 2)!;
    expect(bare.prediction!.pipelineBound).toBeNull();
    expect(bare.notes.join(' ')).toContain('no pipeline bound');
  });

  it('does not predict a row without the figures, nor rows it does not model', () => {
    const v = judgeRow(row('ours pg tasks/get, 1 replica', 1000, { cpuUs: 200 }), 2)!;
    expect(v.missing).toBe('no p in the run');
    expect(v.prediction).toBeUndefined();
    expect(judgeRow(row('raw pg insert (autocommit, 10 connections)', 1000, costs), 2)).toBeUndefined();
    expect(verdictTable([v], 2).join('\n')).toContain('| ours pg tasks/get, 1 replica | no p in the run |');
  });
});
