// One section of the run: the stores its rows read filled, its servers started, its rows set up, checked, warmed up
// and measured in interleaved rounds, then summarised (compared with the rows of earlier sections too), and its
// servers stopped. A row that fails is recorded and left out; the other rows go on.
import { CHILD, ROW_RUN_SLACK_S, SECTION_SETUP_MS, TSX_FLAGS } from '../config.js';
import { log } from '../format.js';
import type { SectionOutcome } from '../run-sections.js';
import { summarize } from '../summarize.js';
import type { Row } from '../types-rows.js';
import type { Params, Scenario, Section, Target } from '../types.js';
import { RowFailures } from './failures.js';
import { hasLatencyClient, prepare, runRounds, useLatencyClient, warmUp, type Targets } from './measure.js';
import { preparePgScale } from './pg-fill.js';
import { startProcess, stopChild } from './processes.js';
import type { RunContext } from './server-spec.js';
import { usePgXacts } from './pg-xacts.js';
import { pgRun, SERVERS, startServer } from './servers.js';
import { prepareScale, prepareSleepers } from './store-fill.js';

/** What every section of a run shares: its parameters, and its context (work dir, PostgreSQL, filled stores). */
export interface SectionRun {
  params: Params;
  ctx: RunContext;
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

/** Fills the stores the rows read that no earlier section has filled (before their servers start). */
async function fillStores(rows: Scenario[], ctx: RunContext): Promise<void> {
  if (rows.some((s) => s.needs === 'scale')) ctx.scale ??= await prepareScale(ctx);
  if (rows.some((s) => s.needs === 'pg-scale')) ctx.pgScale ??= await preparePgScale(pgRun(ctx));
  const sleepers = await prepareSleepers(
    ctx,
    rows.map((s) => s.server),
  );
  if (sleepers !== undefined) ctx.sleepers = { ...ctx.sleepers, ...sleepers };
}

/** The rows' servers and the upstreams those stand in front of: the upstreams and other servers, then the fronts. */
export function serverWaves(rows: Scenario[]): [string[], string[]] {
  const used = [...new Set(rows.map((s) => s.server))];
  const upstreams = used.flatMap((key) => SERVERS[key]!.upstream ?? []);
  const all = [...new Set([...upstreams, ...used])];
  return [
    all.filter((key) => SERVERS[key]!.upstream === undefined),
    all.filter((key) => SERVERS[key]!.upstream),
  ];
}

/**
 * Starts the rows' servers side by side, those in front of an upstream once it is up (with its URL); the rows of a
 * server that does not start (or whose upstream does not) fail.
 */
async function startTargets(rows: Scenario[], ctx: RunContext, failures: RowFailures): Promise<Targets> {
  const targets: Targets = {};
  const start = async (key: string): Promise<Target> => {
    const upstream = SERVERS[key]!.upstream;
    if (upstream === undefined) return startServer(key, ctx);
    const url = targets[upstream]?.url;
    if (url === undefined) throw new Error(`${key}: its upstream ${upstream} did not start`);
    return startServer(key, ctx, url);
  };
  for (const keys of serverWaves(rows)) {
    const started = await Promise.allSettled(keys.map(start));
    keys.forEach((key, i) => {
      const result = started[i]!;
      if (result.status === 'fulfilled') {
        targets[key] = result.value;
        log(`${key}: ${result.value.url}  (${SERVERS[key]!.label})`);
        return;
      }
      for (const s of rows.filter((r) => r.server === key)) failures.add(s.name, 'start', result.reason);
    });
  }
  return targets;
}

const stopTargets = (targets: Targets) =>
  Promise.all(Object.values(targets).flatMap((t) => t.children.map(stopChild)));

/**
 * Measures the section's rows: their ratios against `known` rows (earlier sections') too. `signal` aborts it (its
 * time bound): its servers stop, so whatever it waits on fails soon.
 */
export async function measureSection(
  section: Section,
  run: SectionRun,
  known: Row[],
  signal: AbortSignal,
): Promise<SectionOutcome> {
  const { params, ctx } = run;
  const rows = section.rows;
  const failures = new RowFailures(section.id);
  await fillStores(rows, ctx);
  usePgXacts(ctx.pg.skipped === undefined ? ctx.pg.url : undefined);
  const targets = await startTargets(rows, ctx, failures);
  const stop = () => stopTargets(targets);
  signal.addEventListener('abort', () => void stop(), { once: true });
  try {
    if (rows.some((s) => s.kind === 'latency') && !hasLatencyClient()) {
      useLatencyClient(await startProcess(LATENCY_CLIENT, 'latency-client', ctx));
    }
    const states = await prepare(rows, targets, failures);
    log(`${section.id}: pre-flight done, ${rows.filter((s) => !failures.has(s.name)).length} rows passed`);
    await warmUp(rows, targets, states, params, failures);
    const samples = await runRounds(rows, targets, states, params, failures);
    const measured = rows.filter((s) => !failures.has(s.name));
    return { rows: summarize(measured, samples, known), failed: failures.list() };
  } finally {
    await stop();
  }
}

/**
 * How long a section may take before it fails (a guard against a run that hangs, not a measurement): time to fill
 * its stores and start its servers, and per row its warm-up and rounds with room for each run's setup and settling.
 */
export function sectionTimeBound(section: Section, params: Params): number {
  const perRun = params.duration + ROW_RUN_SLACK_S;
  const perRow = params.warmup + perRun * (params.rounds + 1); // + 1: the pre-flight run
  return SECTION_SETUP_MS + section.rows.length * perRow * 1000;
}
