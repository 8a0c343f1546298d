// Benchmark runner (`npm run bench`): interleaved rounds of our server next to baselines measured in the same
// run — a bare node:http JSON-RPC echo, the official TypeScript SDK v2 server as a peer, raw better-sqlite3 and
// raw `pg` inserts and selects, the tasks/get round trip that push latency is compared with — and the scale rows
// (tasks/get and the operators' list page with 1k vs 1M stored tasks, memory per open subscription, creation next to
// 10k waiting or retrying tasks, 100k sleeping tasks). The rows are in sections/, the process and load plumbing in harness/, bench/README.md says
// how to read the results. Exit code: 0 on success, 1 on a failed check or measurement, 2 for bad flags.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { CHILD, TSX_FLAGS } from './config.js';
import { log } from './format.js';
import {
  verifyScenario,
  runRounds,
  useLatencyClient,
  warmUp,
  type States,
  type Targets,
} from './harness/measure.js';
import { preparePgScale } from './harness/pg-fill.js';
import { dropSchemas, planPostgres, postgresReport, redactUrl, type PgPlan } from './harness/postgres.js';
import { cleanUpNow, makeWorkDir, removeWorkDirs, startProcess, stopAll } from './harness/processes.js';
import { SERVERS, startServer, type RunContext } from './harness/servers.js';
import { prepareScale, prepareSleepers } from './harness/store-fill.js';
import { describePreset, parseParams, UsageError, USAGE } from './options.js';
import { buildReport, machineInfo, markdown, scaleReport, writeResults } from './report.js';
import { selectScenarios } from './sections/index.js';
import { summarize } from './summarize.js';
import type { Row } from './types-rows.js';
import type { Params, Scenario } from './types.js';

/** Rows on PostgreSQL (left out without it), and rows on stored-task stores (left out with --no-scale). */
const needsPg = (s: Scenario) => s.needs === 'pg' || s.needs === 'pg-scale';
const needsScale = (s: Scenario) => s.needs === 'scale' || s.needs === 'pg-scale';

async function startTargets(scenarios: Scenario[], ctx: RunContext): Promise<Targets> {
  const keys = [...new Set(scenarios.map((s) => s.server))];
  const started = await Promise.all(keys.map((key) => startServer(key, ctx)));
  const targets: Targets = Object.fromEntries(started.map((t) => [t.key, t]));
  for (const key of keys) log(`${key}: ${targets[key]!.url}  (${SERVERS[key]!.label})`);
  return targets;
}

/** Setup and pre-flight check of every row: in table order per server, the servers side by side. */
async function prepare(scenarios: Scenario[], targets: Targets): Promise<States> {
  const states: States = new Map();
  const servers = [...new Set(scenarios.map((s) => s.server))];
  await Promise.all(
    servers.map(async (key) => {
      for (const s of scenarios.filter((x) => x.server === key)) {
        const target = targets[s.server]!;
        states.set(s.name, s.setup === undefined ? undefined : await s.setup(target));
        await verifyScenario(s, target, states.get(s.name));
      }
    }),
  );
  log('pre-flight: every scenario passed its check (HTTP 200 with a JSON-RPC result, or a raw run)');
  return states;
}

/**
 * The client of the latency rows runs with its garbage collector on its main thread only (--single-threaded-gc):
 * `perf sched` showed the client's GC helper threads taking the second core of a 2-core machine while the
 * client's own main thread waited for a core to read an event.
 */
const LATENCY_CLIENT = {
  ipc: true,
  command: () => ['--single-threaded-gc', ...TSX_FLAGS, CHILD.latencyClient],
};

async function benchmark(params: Params, scenarios: Scenario[], ctx: RunContext): Promise<Row[]> {
  if (scenarios.some((s) => s.needs === 'scale')) ctx.scale = await prepareScale(ctx);
  if (scenarios.some((s) => s.needs === 'pg-scale') && ctx.pg.skipped === undefined) {
    ctx.pgScale = await preparePgScale(ctx.pg);
  }
  ctx.sleepers = await prepareSleepers(
    ctx,
    scenarios.map((s) => s.server),
  );
  const targets = await startTargets(scenarios, ctx);
  if (scenarios.some((s) => s.kind === 'latency')) {
    useLatencyClient(await startProcess(LATENCY_CLIENT, 'latency-client', ctx));
  }
  const states = await prepare(scenarios, targets);
  await warmUp(scenarios, targets, states, params);
  const samples = await runRounds(scenarios, targets, states, params);
  return summarize(scenarios, samples);
}

function reportFailures(rows: Row[]): boolean {
  const bad = rows.filter((r) => r.non2xx > 0 || r.errors > 0);
  for (const r of bad) log(`WARNING: ${r.name}: ${r.non2xx} non-2xx responses, ${r.errors} errors/timeouts`);
  return bad.length === 0;
}

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

async function main(argv: string[]): Promise<void> {
  const params = parseParams(argv);
  if (params.help) return void console.log(USAGE);
  const machine = machineInfo();
  log(`${params.mode} run: ${describePreset(params)}, pipelining ${params.pipelining}`);
  const selected = selectScenarios(params.only);
  if (selected === undefined) throw new UsageError(`--only ${params.only!.source}: no row matches`);
  const plan = await planRun(params, selected);
  const scenarios = selected.filter(
    (s) => (!needsPg(s) || plan.skipped === undefined) && (!needsScale(s) || !params.noScale),
  );
  const ctx: RunContext = { workDir: makeWorkDir(), cpuProf: params.cpuProf, pg: plan, started: [] };
  if (params.cpuProf) mkdirSync(params.cpuProf, { recursive: true });
  let rows: Row[];
  let dropped: boolean;
  try {
    rows = await benchmark(params, scenarios, ctx);
  } finally {
    await stopAll();
    removeWorkDirs();
    dropped = await dropSchemas(plan);
  }
  const scale = scaleReport(params, selected, ctx.scale);
  const report = buildReport(
    params,
    machine,
    rows,
    postgresReport(plan),
    { scale, pgScale: ctx.pgScale },
    ctx.sleepers,
  );
  const md = markdown(report);
  writeResults(report, md);
  console.log(md);
  log(`wrote ${join('bench', 'results', 'latest.json')} and ${join('bench', 'results', 'latest.md')}`);
  if (params.cpuProf) {
    const keys = ctx.started.filter((k) => k.startsWith('ours'));
    log(
      `CPU profiles of our servers: ${keys.map((k) => join(params.cpuProf!, `${k}.cpuprofile`)).join(', ')}`,
    );
  }
  if (!reportFailures(rows) || !dropped) process.exitCode = 1;
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
main(process.argv.slice(2)).catch((err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  log(err instanceof UsageError ? `${message}\n${USAGE}` : `error: ${message}`);
  process.exitCode = err instanceof UsageError ? 2 : 1;
});
