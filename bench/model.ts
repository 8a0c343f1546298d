// The capacity model of docs/scaling.md, from the per-operation costs a bench run recorded for its pg rows:
//
//   replica bound   N × 10⁶ / s                    N replicas, each one Node.js process on one core
//   cores bound     (C − o) × 10⁶ / (s + p + a + k) what the cores left by other work allow
//   commit bound    b × n (creation only)          b tasks per batch, n notifying commits/s
//   pipeline bound  N × K × b′ ÷ T (creation only) K batches in flight per replica, each of b′ creations
//                                                  and a round trip of T
//   predicted       the least of them
//
// with, per operation in µs: s the servers' CPU (all replicas), p PostgreSQL's (the row's backends, its background
// processes and the postmaster), a the load generator's, k the kernel's interrupt work (irq + softirq of
// /proc/stat); C the machine's cores and o the cores other work took during the row (busy time of /proc/stat minus
// all of the above, steal included), each measured in the same run (harness/cpu-window.ts). n is the rate of the
// raw baseline row whose inserts notify in the same statement (RAW_PG_NOTIFY: such commits go one after another,
// each with its WAL flush), measured in the same run, or given (--notifying-commits). b is the tasks per writing
// commit the row made (1 ÷ its writing commits per operation, at most MAX_BATCH): how many creations reach a replica
// while its batch ahead commits depends on the load, so it is read off the row, and the bound says whether the
// commits, at the rate the database makes them, carry that load. The pipeline bound is the latency's: a replica
// has at most K = BATCHES_IN_FLIGHT batches inserting at once, so it creates at most K × b′ tasks per round trip T
// of a batch, whatever the cores; b′ (creations per batch) and T (the statement, its commit and the replica's read
// of its answer) are the row's own, from its replicas' /metrics (harness/creation-batches.ts).
//
// Usage: npx tsx bench/model.ts <latest.json> [--costs <other latest.json>] [--notifying-commits N]
//   --costs: the per-operation costs (s, p, a, k) from another run's rows of the same names, the load (o) from this
//   run's: a prediction that does not use the costs of the run it predicts.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { median } from './stats.js';
import type { Report } from './report-types.js';
import type { ThroughputRow } from './types-rows.js';
import { RAW_PG_NOTIFY } from './sections/names.js';

/** Tasks per creation batch at most (src/stores/postgres/create-batch.ts, MAX_BATCH). */
export const MAX_BATCH = 500;
/** Creation batches a replica has inserting at once (src/stores/postgres/create-batch.ts, BATCHES_IN_FLIGHT). */
export const BATCHES_IN_FLIGHT = 2;
/** Other work above this many cores during a row: its prediction depends on what that work left, and says so. */
export const LOADED_CORES = 0.25;
/** A row whose cores bound binds but whose cores were busy less than this share was held back by something else. */
export const SATURATED = 0.9;

/** One operation's costs and the machine it runs on. */
export interface ModelInput {
  replicas: number;
  cores: number;
  /** µs per operation: servers, PostgreSQL, load generator, kernel interrupts. */
  s: number;
  p: number;
  a: number;
  k: number;
  /** Cores other work took (0 on a quiet machine). */
  otherCores: number;
  /** Creation: notifying commits per second the database makes (undefined: not known, no commit bound). */
  notifyingCommits?: number | undefined;
  /** Creation: tasks per writing commit (undefined: MAX_BATCH, the most a batch takes). */
  tasksPerCommit?: number | undefined;
  /** Creation: a replica's batches, creations per batch and round trip in ms (undefined: no pipeline bound). */
  pipeline?: { batchTasks: number; batchMs: number } | undefined;
}

export interface Prediction {
  replicaBound: number;
  coresBound: number;
  /** The cores bound with every core free (`o` = 0). */
  quietCoresBound: number;
  commitBound: number | null;
  pipelineBound: number | null;
  predicted: number;
  bound: 'replica' | 'cores' | 'commits' | 'pipeline';
}

/** The model's bounds and prediction, in operations per second. */
export function predict(m: ModelInput): Prediction {
  const replicaBound = (m.replicas * 1e6) / m.s;
  const perOp = m.s + m.p + m.a + m.k;
  const free = Math.max(0, m.cores - Math.max(0, m.otherCores));
  const coresBound = (free * 1e6) / perOp;
  const quietCoresBound = (m.cores * 1e6) / perOp;
  const batch = Math.min(MAX_BATCH, m.tasksPerCommit ?? MAX_BATCH);
  const commitBound = m.notifyingCommits === undefined ? null : batch * m.notifyingCommits;
  const p = m.pipeline;
  const pipelineBound =
    p === undefined || !(p.batchMs > 0)
      ? null
      : (m.replicas * BATCHES_IN_FLIGHT * p.batchTasks * 1000) / p.batchMs;
  const bounds: Array<[Prediction['bound'], number]> = [
    ['replica', replicaBound],
    ['cores', coresBound],
  ];
  if (commitBound !== null) bounds.push(['commits', commitBound]);
  if (pipelineBound !== null) bounds.push(['pipeline', pipelineBound]);
  const [bound, predicted] = bounds.reduce((min, b) => (b[1] < min[1] ? b : min));
  return { replicaBound, coresBound, quietCoresBound, commitBound, pipelineBound, predicted, bound };
}

/** The rows the model predicts: our pg creation and tasks/get rows, with their replica count. */
const MODELLED = /^ours pg (task creation|tasks\/get), (\d+) replicas?$/;

/** A row's (or one round's) figures. */
type Figures = Partial<ThroughputRow['median']>;

/** A row's costs (µs per operation), or the name of the first one missing. */
export function rowCosts(m: Figures): { s: number; p: number; a: number; k: number } | { missing: string } {
  const costs = { s: m.cpuUs, p: m.pgCpuUs, a: m.loadCpuUs, k: m.kernelUs };
  for (const [key, v] of Object.entries(costs)) if (typeof v !== 'number') return { missing: key };
  return costs as { s: number; p: number; a: number; k: number };
}

/** A creation row's (or round's) batches: creations per batch and round trip, when its replicas reported them. */
function pipelineOf(m: Figures): { batchTasks: number; batchMs: number } | undefined {
  const { batchTasks, batchMs } = m;
  return typeof batchTasks === 'number' && typeof batchMs === 'number' ? { batchTasks, batchMs } : undefined;
}

export interface RowVerdict {
  name: string;
  replicas: number;
  measured: number;
  /** Why it could not be predicted. */
  missing?: string;
  costs?: { s: number; p: number; a: number; k: number };
  otherCores?: number;
  busyCores?: number | null;
  prediction?: Prediction;
  /** predicted ÷ measured − 1. */
  error?: number;
  /** Commits per second the row made (writing commits per operation × its rate), for the commit bound. */
  commitsPerSecond?: number | null;
  /** Creation: the batches the pipeline bound used (the row's, or --costs's). */
  pipeline?: { batchTasks: number; batchMs: number };
  notes: string[];
}

/** The model's prediction for each round (from that round's costs and load) and their medians. */
function medianPrediction(predictions: Prediction[]): Prediction {
  const m = (f: (p: Prediction) => number) => median(predictions.map(f));
  const counts = new Map<Prediction['bound'], number>();
  for (const p of predictions) counts.set(p.bound, (counts.get(p.bound) ?? 0) + 1);
  const bound = [...counts].reduce((a, b) => (b[1] > a[1] ? b : a))[0];
  const commit = predictions[0]!.commitBound;
  const pipelines = predictions.flatMap((p) => (p.pipelineBound === null ? [] : [p.pipelineBound]));
  return {
    replicaBound: m((p) => p.replicaBound),
    coresBound: m((p) => p.coresBound),
    quietCoresBound: m((p) => p.quietCoresBound),
    commitBound: commit,
    pipelineBound: pipelines.length === 0 ? null : median(pipelines),
    predicted: m((p) => p.predicted),
    bound,
  };
}

/**
 * The model's verdict on one row: a prediction for each of its rounds from that round's own costs and load (or,
 * with `costsFrom`, another run's row's median costs and this round's load), their median against the row's
 * median rate. A row without rounds (or whose rounds lack the figures) is predicted from its medians.
 */
export function judgeRow(
  row: ThroughputRow,
  cores: number,
  opts: { costsFrom?: ThroughputRow | undefined; notifyingCommits?: number | undefined } = {},
): RowVerdict | undefined {
  const match = MODELLED.exec(row.name);
  if (match === null) return undefined;
  const replicas = Number(match[2]);
  const verdict: RowVerdict = { name: row.name, replicas, measured: row.median.rps, notes: [] };
  const costs = rowCosts((opts.costsFrom ?? row).median);
  if ('missing' in costs) {
    return { ...verdict, missing: `no ${costs.missing} in ${opts.costsFrom ? '--costs' : 'the run'}` };
  }
  const otherCores = row.median.otherCores;
  if (typeof otherCores !== 'number') return { ...verdict, missing: 'no system-wide CPU (/proc/stat)' };
  const creation = match[1] === 'task creation';
  const notifyingCommits = creation ? opts.notifyingCommits : undefined;
  const x = row.median.xactsPerOp;
  const tasksPerCommit = creation && typeof x === 'number' && x > 0 ? 1 / x : undefined;
  const rowPipeline = creation ? pipelineOf((opts.costsFrom ?? row).median) : undefined;
  const at = (c: typeof costs, o: number, pipeline = rowPipeline) =>
    predict({ replicas, cores, ...c, otherCores: o, notifyingCommits, tasksPerCommit, pipeline });
  const rounds = (row.samples as Figures[]).flatMap((r) => {
    const own = opts.costsFrom === undefined;
    const c = own ? rowCosts(r) : costs;
    const pipeline = creation && own ? (pipelineOf(r) ?? rowPipeline) : rowPipeline;
    return 'missing' in c || typeof r.otherCores !== 'number' ? [] : [at(c, r.otherCores, pipeline)];
  });
  const prediction = rounds.length === 0 ? at(costs, otherCores) : medianPrediction(rounds);
  const busyCores = row.median.busyCores ?? null;
  const out: RowVerdict = {
    ...verdict,
    costs,
    otherCores,
    busyCores,
    prediction,
    error: prediction.predicted / row.median.rps - 1,
    commitsPerSecond: typeof x === 'number' ? x * row.median.rps : null,
    ...(rowPipeline === undefined ? {} : { pipeline: rowPipeline }),
  };
  if (otherCores > LOADED_CORES) {
    out.notes.push(
      `other work took ${otherCores.toFixed(2)} of ${cores} cores: predicted on the ${(cores - otherCores).toFixed(2)} ` +
        `left; on a quiet machine the cores would allow ${Math.round(prediction.quietCoresBound)}/s`,
    );
  }
  if (prediction.bound === 'cores' && busyCores !== null && busyCores < SATURATED * cores) {
    out.notes.push(
      `cores busy ${busyCores.toFixed(2)} of ${cores}: not saturated, so something the CPU terms do not see ` +
        '(waits: commits, round trips) held the row back',
    );
  }
  const window = row.median.windowS;
  const seconds = median(row.samples.map((r) => r.seconds));
  if (typeof window === 'number' && row.samples.length > 0 && window > seconds * 1.05) {
    out.notes.push(
      `the CPU was read over ${window.toFixed(2)} s around runs of ${seconds.toFixed(2)} s: ` +
        'the cores bound, a rate over the longer window, reads low by up to that ratio',
    );
  }
  if (creation && rowPipeline === undefined) {
    out.notes.push(
      'no pipeline bound: the replicas reported no creation batches (harness/creation-batches.ts)',
    );
  }
  if (creation && opts.notifyingCommits === undefined) {
    out.notes.push(`no commit bound: no "${RAW_PG_NOTIFY}" row in the run, nor --notifying-commits`);
  } else if (creation && tasksPerCommit === undefined) {
    out.notes.push(
      `commit bound at ${MAX_BATCH} tasks per commit: the row has no writing commits per operation`,
    );
  }
  return out;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const pct = (e: number) => `${e >= 0 ? '+' : '−'}${Math.abs(Math.round(e * 100))} %`;

/** The verdicts as a markdown table, with a line of notes per row that has some. */
export function verdictTable(verdicts: RowVerdict[], cores: number): string[] {
  const lines = [
    `| row | s | p | a | k | other cores | busy cores | replica bound | cores bound (C − o) | quiet cores bound (C = ${cores}) | pipeline bound | predicted | measured | error |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const v of verdicts) {
    if (v.prediction === undefined || v.costs === undefined) {
      lines.push(`| ${v.name} | ${v.missing ?? ''} | | | | | | | | | | | ${fmt(v.measured)} | – |`);
      continue;
    }
    const p = v.prediction;
    const c = v.costs;
    const cells = [
      v.name,
      c.s.toFixed(0),
      c.p.toFixed(0),
      c.a.toFixed(0),
      c.k.toFixed(0),
      v.otherCores!.toFixed(2),
      v.busyCores === null || v.busyCores === undefined ? '–' : v.busyCores.toFixed(2),
      fmt(p.replicaBound),
      fmt(p.coresBound),
      fmt(p.quietCoresBound),
      p.pipelineBound === null ? '–' : fmt(p.pipelineBound),
      `${fmt(p.predicted)} (${p.bound})`,
      fmt(v.measured),
      pct(v.error!),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  const notes = verdicts.flatMap((v) => v.notes.map((n) => `- ${v.name}: ${n}`));
  const commits = verdicts
    .filter((v) => v.name.includes('creation') && (typeof v.commitsPerSecond === 'number' || v.pipeline))
    .map((v) => {
      const parts = [
        ...(typeof v.commitsPerSecond === 'number' ? [`${fmt(v.commitsPerSecond)} writing commits/s`] : []),
        ...(v.pipeline === undefined
          ? []
          : [
              `${v.pipeline.batchTasks.toFixed(1)} creations per batch, ${v.pipeline.batchMs.toFixed(2)} ms per batch`,
            ]),
      ];
      return `- ${v.name}: ${parts.join('; ')}`;
    });
  return [
    ...lines,
    ...(notes.length > 0 ? ['', ...notes] : []),
    ...(commits.length > 0 ? ['', ...commits] : []),
  ];
}

/** The pg rows of a report, by name. */
export function throughputRows(report: Report): Map<string, ThroughputRow> {
  return new Map(
    report.scenarios.filter((r): r is ThroughputRow => r.kind === undefined).map((r) => [r.name, r]),
  );
}

/** Verdicts on every modelled row of `report`, with costs from `costs` when given. */
export function judgeReport(
  report: Report,
  opts: { costs?: Report | undefined; notifyingCommits?: number | undefined } = {},
): RowVerdict[] {
  const costRows = opts.costs === undefined ? undefined : throughputRows(opts.costs);
  const rows = throughputRows(report);
  // n: given, or the same run's notifying-insert baseline.
  const notifyingCommits = opts.notifyingCommits ?? rows.get(RAW_PG_NOTIFY)?.median.rps;
  return [...rows.values()].flatMap((row) => {
    const costsFrom = costRows?.get(row.name);
    if (costRows !== undefined && costsFrom === undefined && MODELLED.test(row.name)) {
      return [
        { name: row.name, replicas: 0, measured: row.median.rps, missing: 'not in --costs', notes: [] },
      ];
    }
    const v = judgeRow(row, report.machine.cores, { costsFrom, notifyingCommits });
    return v === undefined ? [] : [v];
  });
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { costs: { type: 'string' }, 'notifying-commits': { type: 'string' } },
  });
  if (positionals.length !== 1) {
    console.error(
      'usage: npx tsx bench/model.ts <latest.json> [--costs <latest.json>] [--notifying-commits N]',
    );
    process.exit(2);
  }
  const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Report;
  const report = read(positionals[0]!);
  const costs = values.costs === undefined ? undefined : read(values.costs);
  const n = values['notifying-commits'];
  const verdicts = judgeReport(report, { costs, notifyingCommits: n === undefined ? undefined : Number(n) });
  const { machine } = report;
  console.log(
    `${positionals[0]}: ${machine.cores} cores, load average at start ${machine.loadavg.join(' / ')}, ` +
      `commit ${machine.commit}${costs === undefined ? '' : `; costs from ${values.costs}`}`,
  );
  console.log('');
  for (const line of verdictTable(verdicts, machine.cores)) console.log(line);
  const judged = verdicts.filter((v) => v.error !== undefined);
  const within = judged.filter((v) => Math.abs(v.error!) <= 0.25).length;
  console.log('');
  console.log(
    `${within} of ${judged.length} rows within 25 %` +
      (judged.length > 0
        ? `; median |error| ${Math.round(median(judged.map((v) => Math.abs(v.error!))) * 100)} %`
        : ''),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) main();
