// The run's report: latest.json (machine, parameters, sections, failed rows, servers, every row with its samples) and
// latest.md (the run's status and the tables), in bench/results/ or the run's --out directory.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { ADMIN_PAGE, HOST, PROTOCOL_VERSION, ROOT, SCALE_SAMPLE, SCALE_TOOLS } from './config.js';
import { fmtInt } from './format.js';
import type { PostgresReport } from './harness/postgres.js';
import type { Machine, Report, ScaleReport } from './report-types.js';
import { SERVERS } from './harness/servers.js';
import { round1 } from './stats.js';
import { latencyTable } from './tables/latency.js';
import { footprintTable, memoryTable } from './tables/memory.js';
import { statusLines } from './tables/status.js';
import { headerLines, postgresNote, throughputTable } from './tables/throughput.js';
import type { RunProgress } from './run-sections.js';
import type { FootprintRow, LatencyRow, MemoryRow, ThroughputRow } from './types-rows.js';
import type { FillSummary, Params, PgScaleFill, ScaleFill, Scenario, SleepFill } from './types.js';

function gitCommit(): string {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  if (head.status !== 0) return 'unknown';
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return `${head.stdout.trim()}${dirty.stdout.trim() ? ' (dirty)' : ''}`;
}

export function machineInfo(): Machine {
  const cpu = cpus();
  return {
    cpuModel: cpu[0]?.model.trim() ?? 'unknown',
    cores: cpu.length,
    totalMemGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    platform: platform(),
    release: release(),
    node: process.version,
    loadavg: loadavg().map(round1),
    commit: gitCommit(),
    date: new Date().toISOString(),
  };
}

function packageVersion(name: string): string {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

/** What the report says about the stored-task rows: sizes and fill times, or why they did not run. */
export function scaleReport(
  params: Params,
  selected: Scenario[],
  scale: ScaleFill | undefined,
): ScaleReport | undefined {
  if (params.noScale) return { skipped: 'disabled with --no-scale' };
  if (!selected.some((s) => s.needs === 'scale')) return { skipped: 'no stored-task row selected (--only)' };
  if (scale === undefined) return undefined;
  const strip = ({ sample: _sample, ...rest }: ScaleFill['small']): FillSummary => rest;
  return {
    small: strip(scale.small),
    large: strip(scale.large),
    totalMs: scale.totalMs,
    sampled: SCALE_SAMPLE,
  };
}

/** What a report is made of: the run's settings, its progress so far, and what it filled. */
export interface ReportInput {
  params: Params;
  machine: Machine;
  progress: RunProgress;
  postgres: PostgresReport;
  stores: {
    scale: ScaleReport | undefined;
    pgScale: PgScaleFill | undefined;
    sleepers: SleepFill | undefined;
  };
}

export function buildReport({ params, machine, progress, postgres, stores }: ReportInput): Report {
  const { scale, pgScale, sleepers } = stores;
  const {
    help: _help,
    cpuProf: _cpuProf,
    pg: _pg,
    noPg: _noPg,
    noScale: _noScale,
    out: _out,
    only,
    ...parameters
  } = params;
  return {
    machine,
    complete: progress.sections.every((s) => s.status !== 'not run'),
    sections: progress.sections,
    failed: progress.failed,
    parameters: {
      ...parameters,
      ...(only === undefined ? {} : { only: only.source }),
      host: HOST,
      protocolVersion: PROTOCOL_VERSION,
    },
    loadGenerator: { name: 'autocannon', version: packageVersion('autocannon'), inProcess: true },
    peer: {
      '@modelcontextprotocol/server': packageVersion('@modelcontextprotocol/server'),
      '@modelcontextprotocol/node': packageVersion('@modelcontextprotocol/node'),
    },
    servers: Object.fromEntries(Object.entries(SERVERS).map(([k, v]) => [k, v.label])),
    postgres,
    ...(scale === undefined ? {} : { scale }),
    ...(pgScale === undefined ? {} : { pgScale }),
    ...(sleepers === undefined ? {} : { sleepers }),
    scenarios: progress.rows,
  };
}

function scaleNote(scale: ScaleReport | undefined): string[] {
  if (scale === undefined) return [];
  if (scale.skipped !== undefined) return ['', `- Stored-task rows skipped: ${scale.skipped}`];
  const { small, large, totalMs } = scale;
  return [
    '',
    `- Stored-task rows: ${fmtInt(small.count)} and ${fmtInt(large.count)} completed tasks of the bench ` +
      'principal, cloned from one task our server ran (bench/children/scale-tasks.ts); filled in ' +
      `${small.ms} ms and ${(large.ms / 1000).toFixed(1)} s (${(large.bytes / 2 ** 20).toFixed(0)} MiB), ` +
      `${(totalMs / 1000).toFixed(1)} s with the template run. Each tasks/get reads another task, sampled ` +
      `from the whole store (${fmtInt(SCALE_SAMPLE)} samples, visited in turn). The operator list rows ask ` +
      `the same servers (run with --dev-operator) for the newest ${ADMIN_PAGE} tasks of one of the ` +
      `${SCALE_TOOLS.length} tools the tasks are spread over, another tool per request.`,
  ];
}

function pgScaleNote(fill: PgScaleFill | undefined): string[] {
  if (fill === undefined) return [];
  const { small, large, totalMs } = fill;
  return [
    '',
    `- PostgreSQL operator list rows: schemas of ${fmtInt(small.count)} and ${fmtInt(large.count)} completed ` +
      `tasks, each migrated by the store's migrations and filled with one INSERT … SELECT over generate_series, ` +
      `then ANALYZEd (bench/harness/pg-fill.ts): ${small.ms} ms and ${(large.ms / 1000).toFixed(1)} s ` +
      `(${(large.bytes / 2 ** 20).toFixed(0)} MiB with indexes), ${(totalMs / 1000).toFixed(1)} s in all.`,
  ];
}

export function markdown(report: Report): string {
  const rows = report.scenarios;
  const throughput = rows.filter((r): r is ThroughputRow => r.kind === undefined);
  const latency = rows.filter((r): r is LatencyRow => r.kind === 'latency');
  const memory = rows.filter((r): r is MemoryRow => r.kind === 'memory');
  const footprint = rows.filter((r): r is FootprintRow => r.kind === 'footprint');
  const lines = [...headerLines(report), '', ...statusLines(report)];
  if (throughput.length > 0) lines.push('', ...throughputTable(throughput));
  lines.push('', postgresNote(report));
  if (latency.length > 0) lines.push('', ...latencyTable(latency));
  lines.push(...scaleNote(report.scale), ...pgScaleNote(report.pgScale));
  if (memory.length > 0) lines.push('', ...memoryTable(memory));
  if (footprint.length > 0) lines.push('', ...footprintTable(footprint, report.sleepers));
  return lines.join('\n') + '\n';
}

/** Writes latest.json and latest.md into `dir`. */
export function writeResults(report: Report, md: string, dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'latest.json'), JSON.stringify(report, null, 2) + '\n');
  writeFileSync(join(dir, 'latest.md'), md);
}
