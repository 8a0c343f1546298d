// Section 1, crash chaos: several `serve` processes share one store (a SQLite file or a PostgreSQL schema) and run
// durable tasks with memoized steps, input requests, steps that fail and are retried, and durable sleeps, while a
// driver SIGKILLs them at chosen points (killer.ts) and restarts them. Clients keep creating (most of them under an
// idempotency key, retried after lost or deliberately dropped answers), polling, answering and cancelling through
// whichever processes are up. Afterwards the store and the per-attempt log (test/fixtures/tools/chaos-tools.mjs)
// are checked against the invariants (analyse.ts). The clock sections run the same with clock jumps instead of
// kills (clock-jumps.ts).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Invariants } from '../harness/invariants.js';
import { LogTail } from '../harness/log-tail.js';
import { CHAOS_TOOLS, COMMON_SERVE_FLAGS } from '../harness/paths.js';
import { pgSchema } from '../harness/postgres.js';
import { rng as makeRng } from '../harness/random.js';
import { now } from '../harness/time.js';
import { fmtInt } from '../stats.js';
import type { ChaosParams, SectionContext, SectionResult } from '../types.js';
import { analyse } from './analyse.js';
import { Clients } from './clients.js';
import { runJumps } from './clock-jumps.js';
import { Cluster } from './cluster.js';
import { newCrashStats, type CrashRun, type CrashStats } from './context.js';
import { Hooks } from './hooks.js';
import { CLOCK_INVARIANTS, CRASH_INVARIANTS } from './invariants.js';
import { runKills } from './killer.js';
import { LogWatch } from './log-watch.js';
import { settle } from './settle.js';
import { readStore, type StoreLocation } from './store.js';

export interface CrashOptions extends SectionContext {
  backend: 'sqlite' | 'postgres';
  params: ChaosParams;
}

function prepare({ backend, params, scope, seed, pgUrl, progress }: CrashOptions): {
  run: CrashRun;
  serveArgs: string[];
} {
  const jumping = params.jumps !== undefined;
  const dir = scope.tempDir('durable-mcp-chaos-crash-');
  const logFile = join(dir, 'runs.log');
  writeFileSync(logFile, '');
  let store: StoreLocation;
  let storeArgs: string[];
  if (backend === 'sqlite') {
    store = { backend, file: join(dir, 'tasks.db') };
    storeArgs = ['--store', store.file];
  } else {
    store = { backend, url: pgUrl, schema: pgSchema(scope, pgUrl, 'crash') };
    storeArgs = ['--store', pgUrl, '--pg-schema', store.schema, '--pg-pool-size', '4'];
  }
  const serveArgs = [
    ...COMMON_SERVE_FLAGS,
    ...storeArgs,
    ...[
      '--tools',
      CHAOS_TOOLS,
      '--lease-ms',
      String(params.leaseMs),
      '--concurrency',
      String(params.concurrency),
    ],
  ];
  const inv = Invariants.of(jumping ? CLOCK_INVARIANTS : CRASH_INVARIANTS);
  const stats = newCrashStats();
  const run = {
    backend,
    params,
    jumping,
    scope,
    rng: makeRng(seed),
    inv,
    stats,
    store,
    dir,
    logFile,
    progress,
  };
  return { run, serveArgs };
}

export async function runCrash(options: CrashOptions): Promise<SectionResult> {
  const started = now();
  const { run, serveArgs } = prepare(options);
  const { params, inv, stats, jumping } = run;
  const cluster = new Cluster(run, serveArgs, { DURABLE_MCP_TEST_LOG: run.logFile });
  for (const slot of cluster.slots) if (slot.clockFile !== undefined) writeFileSync(slot.clockFile, '0');
  for (const slot of cluster.slots) cluster.startSlot(slot);
  await Promise.all(cluster.slots.map((s) => s.proc?.started));
  const watch = new LogWatch(run.logFile, run.scope);
  const hooks = new Hooks();
  const clients = new Clients(run, cluster, hooks);
  const manager = clients.manage();

  const chaosStarted = now();
  if (jumping) await runJumps(run, cluster, clients, chaosStarted);
  else await runKills({ run, cluster, clients, watch, hooks }, chaosStarted);
  const chaosMs = now() - chaosStarted;
  if (!jumping)
    inv.expect(
      'kills',
      stats.kills >= (params.kills ?? 0),
      `only ${stats.kills} of ${params.kills} kills within ${params.chaosMs} ms`,
    );

  const settleMs = await settle(run, cluster, clients, manager);
  await cluster.stopAll();
  watch.stop();
  for (const u of cluster.unplanned) inv.fail('no-crash', u);
  inv.ok('no-crash', stats.restarts + params.servers - cluster.unplanned.length);

  // Read the store and the log, check.
  const store = await readStore(run.store);
  const lines = new LogTail(run.logFile);
  const all = lines.read();
  lines.close();
  const { byTask, recs, sentCids, unknownCids } = clients;
  const analysis = analyse({
    store,
    lines: all,
    byTask,
    recs,
    sentCids,
    unknownCids,
    kills: cluster.kills,
    inv,
    params,
  });
  Object.assign(stats, analysis, { chaosMs, settleMs, durationMs: now() - started });
  stats.summaryLine = summaryLine(stats, jumping);
  return { inv, stats };
}

function summaryLine(stats: CrashStats, jumping: boolean): string {
  const what = jumping
    ? `${fmtInt(stats.jumps)} clock jumps of up to ${(stats.maxOffsetMs ?? 0) / 60_000} min, ${fmtInt(stats.fencedRuns)} runs fenced`
    : `${fmtInt(stats.kills)} kills (${Object.entries(stats.killsByPoint)
        .sort((a, b) => b[1] - a[1])
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')})`;
  const line = `${what}; ${fmtInt((stats.storedTasks ?? 0) - stats.ttlProbes)} tasks (${fmtInt(stats.completed)} completed, ${fmtInt(stats.cancelled)} cancelled, ${fmtInt(stats.failed)} failed) + ${stats.ttlProbes} TTL probes, ${fmtInt(stats.runs)} runs`;
  return jumping ? line : `${line}; ${durableSummary(stats)}`;
}

/** Retries, sleeps and keyed creations in one line. */
function durableSummary(stats: CrashStats): string {
  const d = stats.durable;
  const k = stats.keys;
  const dropped = Object.values(k.dropped).reduce((a, b) => a + b, 0);
  return `${fmtInt(d?.retryTasks)} tasks with failing steps (${fmtInt(d?.failedAttempts)} failed attempts, ${fmtInt(d?.retries)} retries, ${fmtInt(d?.gaveUp)} gave up), ${fmtInt(d?.sleepTasks)} with sleeps (${fmtInt(d?.sleeps)} ended); ${fmtInt(k.keyed)} keyed calls, ${fmtInt(dropped)} answers dropped + ${fmtInt(k.lostToKills)} lost to kills, retried: ${fmtInt(stats.duplicates)} duplicate tasks`;
}
