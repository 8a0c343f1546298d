// The benchmark run (started by bench/run.ts): the rows chosen, then their sections one after another
// (bench/run-sections.ts, each measured by bench/harness/section.ts), the results written after each section and
// once more at the end. Exit code: 0 when every section ran and no row failed, 1 otherwise, 2 for bad flags.
import { join } from 'node:path';
import { SMOKE } from './config.js';
import { log } from './format.js';
import { dropSchemas, planPostgres, postgresReport, redactUrl, type PgPlan } from './harness/postgres.js';
import { cleanUpNow, makeWorkDir, removeWorkDirs, stopAll } from './harness/processes.js';
import { measureSection, sectionTimeBound } from './harness/section.js';
import type { RunContext } from './harness/server-spec.js';
import { describePreset, parseParams, UsageError, USAGE } from './options.js';
import { buildReport, machineInfo, markdown, scaleReport, writeResults } from './report.js';
import type { Machine } from './report-types.js';
import { rowsWithErrors, runSections, type PlannedSection, type RunProgress } from './run-sections.js';
import { sectionsOf, selectScenarios } from './sections/index.js';
import { sectionLine } from './tables/status.js';
import type { SectionReport } from './types-rows.js';
import type { Params, Scenario } from './types.js';

/** Rows on PostgreSQL (left out without it), and rows on stored-task stores (left out with --no-scale). */
const needsPg = (s: Scenario) => s.needs === 'pg' || s.needs === 'pg-scale';
const needsScale = (s: Scenario) => s.needs === 'scale' || s.needs === 'pg-scale';

/** The run's PostgreSQL plan, so that a signal can still drop its schemas. */
let pgPlan: PgPlan | undefined;

async function planRun(params: Params, selected: Scenario[]): Promise<PgPlan> {
  const plan: PgPlan = selected.some(needsPg)
    ? await planPostgres(params)
    : { skipped: 'no PostgreSQL row selected (--only)' };
  pgPlan = plan;
  if (plan.skipped !== undefined) log(`PostgreSQL rows skipped: ${plan.skipped}`);
  else log(`PostgreSQL rows: ${redactUrl(plan.url)}, schemas ${Object.values(plan.schemas).join(', ')}`);
  if (params.noScale) log('stored-task rows skipped: disabled with --no-scale');
  return plan;
}

/**
 * The sections of the selected rows, each without the rows left out (skipped when none is left). A smoke run with
 * CI=true keeps its PostgreSQL rows even when PostgreSQL is unreachable: they fail, as the PostgreSQL tests do.
 */
function planSections(params: Params, selected: Scenario[], plan: PgPlan): PlannedSection[] {
  const pgRequired = params.mode === 'smoke' && process.env.CI === 'true' && !params.noPg;
  const leftOut = (s: Scenario): string | undefined => {
    if (needsPg(s) && plan.skipped !== undefined && !pgRequired)
      return `PostgreSQL rows skipped: ${plan.skipped}`;
    if (needsScale(s) && params.noScale) return 'stored-task rows skipped: disabled with --no-scale';
    return undefined;
  };
  return sectionsOf(selected).map((section) => {
    const rows = section.rows.filter((s) => leftOut(s) === undefined);
    return rows.length > 0 ? { ...section, rows } : { ...section, skipped: leftOut(section.rows[0]!) };
  });
}

interface RunOutput {
  params: Params;
  machine: Machine;
  selected: Scenario[];
  plan: PgPlan;
  ctx: RunContext;
}

/** Writes latest.json and latest.md of the run so far; returns the Markdown. */
function writeProgress(out: RunOutput, progress: RunProgress): string {
  const { params, machine, selected, plan, ctx } = out;
  const report = buildReport({
    params,
    machine,
    progress,
    postgres: postgresReport(plan),
    stores: { scale: scaleReport(params, selected, ctx.scale), pgScale: ctx.pgScale, sleepers: ctx.sleepers },
  });
  const md = markdown(report);
  writeResults(report, md, params.out);
  return md;
}

/** After each section: its line (stdout in a smoke run, where `npm test` counts them; else stderr), then the files. */
function onSection(out: RunOutput, progress: RunProgress, section: SectionReport): void {
  const line = sectionLine(section, progress.failed);
  if (out.params.mode === 'smoke') console.log(line);
  else log(line);
  writeProgress(out, progress);
}

async function run(params: Params, machine: Machine): Promise<boolean> {
  log(`${params.mode} run: ${describePreset(params)}, pipelining ${params.pipelining}`);
  const selected = selectScenarios(params.only);
  if (selected === undefined) throw new UsageError(`--only ${params.only!.source}: no row matches`);
  const plan = await planRun(params, selected);
  const ctx: RunContext = { workDir: makeWorkDir(), cpuProf: params.cpuProf, pg: plan, started: [] };
  const out: RunOutput = { params, machine, selected, plan, ctx };
  let progress: RunProgress;
  let dropped: boolean;
  try {
    progress = await runSections(planSections(params, selected, plan), {
      measure: (section, known, signal) => measureSection(section, { params, ctx }, known, signal),
      boundMs: (section) => sectionTimeBound(section, params),
      onSection: (p, section) => onSection(out, p, section),
    });
  } finally {
    await stopAll();
    removeWorkDirs();
    dropped = await dropSchemas(plan);
  }
  const md = writeProgress(out, progress);
  if (params.mode !== 'smoke') console.log(md);
  log(`wrote ${join(params.out, 'latest.json')} and ${join(params.out, 'latest.md')}`);
  if (params.cpuProf) {
    const keys = ctx.started.filter((k) => k.startsWith('ours'));
    log(
      `CPU profiles of our servers: ${keys.map((k) => join(params.cpuProf!, `${k}.cpuprofile`)).join(', ')}`,
    );
  }
  for (const r of rowsWithErrors(progress.rows))
    log(`WARNING: ${r.name}: ${r.non2xx} non-2xx responses, ${r.errors} errors/timeouts`);
  return progress.sections.every((s) => s.status === 'done' || s.status === 'skipped') && dropped;
}

async function main(argv: string[]): Promise<void> {
  const params = parseParams(argv);
  if (params.help) return void console.log(USAGE);
  if (params.mode !== 'smoke' && SMOKE) throw new UsageError('the smoke sizes are on, but not --smoke');
  if (!(await run(params, machineInfo()))) process.exitCode = 1;
}

function onSignal(signal: NodeJS.Signals): void {
  log(`${signal}: stopping servers`);
  void stopAll()
    .then(() => dropSchemas(pgPlan))
    .finally(() => process.exit(130));
}

process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
process.on('exit', cleanUpNow);
await main(process.argv.slice(2)).catch((err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  log(err instanceof UsageError ? `${message}\n${USAGE}` : `error: ${message}`);
  process.exitCode = err instanceof UsageError ? 2 : 1;
});
