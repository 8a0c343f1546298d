// `npm run test:chaos` (full run) and `npm run test:chaos:ci` (--ci: small, bounded parameters): the reliability
// suite of docs/reliability.md. Runs the sections one after another, each in its own scope (processes, temp dirs,
// PostgreSQL schemas, all released even on failure) and its own time bound, prints one line per section and
// finally `chaos: N passed, M failed` (invariants), writes the results table, and exits non-zero on any violation.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runCrash, CLOCK_INVARIANTS, CRASH_INVARIANTS } from './crash.mjs';
import { runFaults, FAULT_INVARIANTS, FULL_INVARIANTS } from './faults.mjs';
import { runFuzz, FUZZ_INVARIANTS } from './fuzz.mjs';
import { runLoad, LOAD_INVARIANTS } from './load.mjs';
import { runOracles, ORACLE_INVARIANTS } from './oracles.mjs';
import { writeReport } from './report.mjs';
import {
  closeAllScopes,
  DEFAULT_PG_URL,
  emergencyCleanupSync,
  Invariants,
  now,
  pgReachable,
  ROOT,
  Scope,
} from './lib.mjs';

const USAGE = `usage: node scripts/chaos/run.mjs [--ci] [flags]
  --ci                 small parameters for CI (a few minutes on 2 cores); default: the full run
  --only LIST          sections to run: oracles, crash-sqlite, crash-postgres, faults-postgres, faults-sqlite,
                       faults-disk-full, clock-sqlite, clock-postgres, fuzz, load
  --seed N             seed of every random choice (default: random; printed)
  --pg URL             PostgreSQL for the PostgreSQL sections (default $DURABLE_MCP_CHAOS_PG or ${DEFAULT_PG_URL})
  --no-postgres        skip the PostgreSQL sections (when PostgreSQL is unreachable they are skipped anyway,
                       except with CI=true, where they fail)
  --kills N            kills per backend in the crash sections
  --fuzz-requests N    generated requests in the fuzz section
  --load-tasks N --load-subscribers N --load-seconds N    load section size
  --report PATH        results table (default: docs/reliability.md for the full run, test-results/chaos-ci.md for --ci)
  --help               this text`;

const POINTS = {
  'mid-step': 25,
  'mid-commit': 20,
  'mid-retry': 8,
  'mid-finish': 15,
  'mid-answer': 12,
  'mid-create': 10,
  'mid-startup': 5,
  random: 13,
};

// The durable-execution share of the crash sections' tasks: steps failing some attempts and retried after short
// backoffs, durable sleeps between steps (both short, so that waits cross kills and processes), and clients that
// create under an idempotency key and retry after lost answers, some of them dropped on purpose.
const DURABLE = {
  retryRate: 0.35,
  failMax: 3,
  giveUpRate: 0.15,
  backoffMinMs: 20,
  backoffMaxMs: 200,
  sleepRate: 0.35,
  sleepMsMin: 100,
  keyRate: 0.75,
  dropRate: 0.3,
  hedgeRate: 0.1,
};

const MODES = {
  full: {
    crash: {
      servers: 3,
      concurrency: 3,
      leaseMs: 1_000,
      kills: 250,
      chaosMs: 420_000,
      gapMinMs: 100,
      gapMaxMs: 500,
      restartMinMs: 0,
      restartMaxMs: 400,
      inflight: 24,
      stepsMin: 2,
      stepsMax: 4,
      stepMsMin: 20,
      stepMsMax: 200,
      inputsMax: 2,
      cancelRate: 0.1,
      ttlProbes: 2,
      points: POINTS,
      ...DURABLE,
      sleepMsMax: 800,
      boundMs: 600_000,
    },
    faults: {
      pgCycles: ['terminate', 'refuse', 'reset', 'terminate', 'blackhole', 'refuse', 'reset', 'terminate'],
      outageMs: 3_000,
      blackholeMs: 15_000,
      busyCycles: 2,
      busyHoldMs: 20_000,
      fullCycles: 2,
      fullHoldMs: 8_000,
      fullFsMb: 24,
      waitBoundMs: 12_000,
      leaseMs: 1_000,
      recoveryBoundMs: 8_000,
      boundMs: 420_000,
    },
    clock: {
      servers: 2,
      concurrency: 3,
      leaseMs: 1_000,
      jumps: 24,
      // Wall-clock offsets, applied to the processes in turn: forward and backward, skews of up to 32 min between
      // them, and back to the truth; all well inside the one-hour TTL of the tasks.
      offsets: [600_000, -600_000, 0, 0, -1_800_000, 120_000, 0, 0, 5_000, -5_000, 0, 0],
      chaosMs: 90_000,
      gapMinMs: 1_000,
      gapMaxMs: 3_000,
      restartMinMs: 0,
      restartMaxMs: 0,
      inflight: 16,
      stepsMin: 2,
      stepsMax: 4,
      stepMsMin: 20,
      stepMsMax: 200,
      inputsMax: 2,
      cancelRate: 0,
      ttlProbes: 2,
      boundMs: 240_000,
    },
    fuzz: {
      requests: 100_000,
      parallel: 6,
      heapMb: 64,
      slowSockets: 200,
      slowMs: 15_000,
      rssLimitMb: 400,
      boundMs: 900_000,
    },
    load: {
      tasks: 10_000,
      subscribers: 1_000,
      seconds: 60,
      concurrency: 16,
      probeEveryMs: 200,
      responsiveP99Ms: 1_000,
      responsiveMaxMs: 5_000,
      rssLimitMb: 1_024,
      boundMs: 420_000,
    },
  },
  // CI: every section, small and bounded (about 90 s on 2 cores in all).
  ci: {
    crash: {
      servers: 3,
      concurrency: 3,
      leaseMs: 800,
      kills: 10,
      chaosMs: 12_000,
      gapMinMs: 100,
      gapMaxMs: 300,
      restartMinMs: 0,
      restartMaxMs: 200,
      inflight: 8,
      stepsMin: 2,
      stepsMax: 3,
      stepMsMin: 20,
      stepMsMax: 100,
      inputsMax: 1,
      cancelRate: 0.1,
      ttlProbes: 1,
      points: POINTS,
      ...DURABLE,
      sleepMsMax: 400,
      boundMs: 60_000,
    },
    faults: {
      pgCycles: ['terminate', 'blackhole'],
      outageMs: 1_000,
      // Longer than the client-side statement bound (statement timeout 5 s + 1 s), so that it is felt.
      blackholeMs: 6_500,
      busyCycles: 1,
      busyHoldMs: 6_500,
      fullCycles: 1,
      fullHoldMs: 4_000,
      fullFsMb: 16,
      waitBoundMs: 12_000,
      leaseMs: 800,
      recoveryBoundMs: 8_000,
      boundMs: 60_000,
    },
    clock: {
      servers: 2,
      concurrency: 3,
      leaseMs: 800,
      jumps: 6,
      offsets: [600_000, -600_000, 0, 0, -120_000, 60_000],
      chaosMs: 10_000,
      gapMinMs: 300,
      gapMaxMs: 700,
      restartMinMs: 0,
      restartMaxMs: 0,
      inflight: 8,
      stepsMin: 2,
      stepsMax: 3,
      stepMsMin: 20,
      stepMsMax: 100,
      inputsMax: 1,
      cancelRate: 0,
      // TTL under clock jumps is checked by the full run; here the sweep wait would double the section.
      ttlProbes: 0,
      boundMs: 60_000,
    },
    fuzz: {
      requests: 1_500,
      parallel: 4,
      heapMb: 64,
      slowSockets: 30,
      slowMs: 1_500,
      rssLimitMb: 400,
      // The generator stops 60 s before the bound: 1,500 requests take a few seconds.
      boundMs: 90_000,
    },
    load: {
      tasks: 200,
      subscribers: 20,
      seconds: 4,
      concurrency: 8,
      probeEveryMs: 200,
      responsiveP99Ms: 1_000,
      responsiveMaxMs: 5_000,
      rssLimitMb: 512,
      boundMs: 60_000,
    },
  },
};

const SECTIONS = [
  {
    id: 'oracles',
    title: 'Self-check of the oracles',
    kind: 'oracles',
    invariants: ORACLE_INVARIANTS,
    run: (ctx) => runOracles(ctx),
  },
  {
    id: 'crash-sqlite',
    title: 'Crash chaos, SQLite',
    kind: 'crash',
    invariants: CRASH_INVARIANTS,
    run: (ctx) => runCrash({ ...ctx, backend: 'sqlite', params: ctx.mode.crash }),
  },
  {
    id: 'crash-postgres',
    title: 'Crash chaos, PostgreSQL',
    kind: 'crash',
    postgres: true,
    invariants: CRASH_INVARIANTS,
    run: (ctx) => runCrash({ ...ctx, backend: 'postgres', params: ctx.mode.crash }),
  },
  {
    id: 'faults-postgres',
    title: 'Fault injection, PostgreSQL',
    kind: 'faults',
    postgres: true,
    invariants: FAULT_INVARIANTS,
    run: (ctx) => runFaults({ ...ctx, backend: 'postgres', params: ctx.mode.faults }),
  },
  {
    id: 'faults-sqlite',
    title: 'Fault injection, SQLite',
    kind: 'faults',
    invariants: FAULT_INVARIANTS,
    run: (ctx) => runFaults({ ...ctx, backend: 'sqlite', params: ctx.mode.faults }),
  },
  {
    id: 'faults-disk-full',
    title: 'Fault injection, SQLite disk full',
    kind: 'faults',
    invariants: FULL_INVARIANTS,
    run: (ctx) => runFaults({ ...ctx, backend: 'sqlite', fault: 'full', params: ctx.mode.faults }),
  },
  {
    id: 'clock-sqlite',
    title: 'Clock jumps, SQLite',
    kind: 'clock',
    invariants: CLOCK_INVARIANTS,
    run: (ctx) => runCrash({ ...ctx, backend: 'sqlite', params: ctx.mode.clock }),
  },
  {
    id: 'clock-postgres',
    title: 'Clock jumps, PostgreSQL',
    kind: 'clock',
    postgres: true,
    invariants: CLOCK_INVARIANTS,
    run: (ctx) => runCrash({ ...ctx, backend: 'postgres', params: ctx.mode.clock }),
  },
  {
    id: 'fuzz',
    title: 'Bad input (fuzzing)',
    kind: 'fuzz',
    invariants: FUZZ_INVARIANTS,
    run: (ctx) => runFuzz({ ...ctx, params: ctx.mode.fuzz }),
  },
  {
    id: 'load',
    title: 'Load',
    kind: 'load',
    invariants: LOAD_INVARIANTS,
    run: (ctx) => runLoad({ ...ctx, params: ctx.mode.load }),
  },
];

function boundFor(section, mode) {
  return mode[section.kind]?.boundMs ?? 60_000;
}

const usage = (message) => Object.assign(new Error(message), { usage: true });

async function main() {
  const { values } = parseArgs({
    options: {
      ci: { type: 'boolean' },
      only: { type: 'string' },
      seed: { type: 'string' },
      pg: { type: 'string' },
      'no-postgres': { type: 'boolean' },
      kills: { type: 'string' },
      'fuzz-requests': { type: 'string' },
      'load-tasks': { type: 'string' },
      'load-subscribers': { type: 'string' },
      'load-seconds': { type: 'string' },
      report: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const modeName = values.ci ? 'ci' : 'full';
  const mode = JSON.parse(JSON.stringify(MODES[modeName]));
  const int = (v, name) => {
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < 0) throw usage(`--${name} must be a non-negative integer`);
    return n;
  };
  if (values.kills !== undefined) mode.crash.kills = int(values.kills, 'kills');
  if (values['fuzz-requests'] !== undefined)
    mode.fuzz.requests = int(values['fuzz-requests'], 'fuzz-requests');
  if (values['load-tasks'] !== undefined) mode.load.tasks = int(values['load-tasks'], 'load-tasks');
  if (values['load-subscribers'] !== undefined)
    mode.load.subscribers = int(values['load-subscribers'], 'load-subscribers');
  if (values['load-seconds'] !== undefined) mode.load.seconds = int(values['load-seconds'], 'load-seconds');
  const seed = values.seed !== undefined ? int(values.seed, 'seed') : Math.floor(Math.random() * 2 ** 31);
  const pgUrl = values.pg ?? process.env.DURABLE_MCP_CHAOS_PG ?? DEFAULT_PG_URL;
  const only = values.only
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const id of only ?? []) {
    if (!SECTIONS.some((s) => s.id === id)) throw usage(`--only: unknown section ${id}`);
  }
  const selected = SECTIONS.filter((s) => only === undefined || only.includes(s.id));
  const reportPath =
    values.report ??
    (modeName === 'full' ? join(ROOT, 'docs', 'reliability.md') : join(ROOT, 'test-results', 'chaos-ci.md'));

  console.log(`chaos: ${modeName} run, seed ${seed}, sections ${selected.map((s) => s.id).join(', ')}`);
  const pgUp = selected.some((s) => s.postgres) && !values['no-postgres'] ? await pgReachable(pgUrl) : false;
  const results = [];
  const runStarted = now();
  for (const [index, section] of selected.entries()) {
    const started = now();
    const bound = boundFor(section, mode);
    const scope = new Scope(section.id);
    let result;
    if (section.postgres && values['no-postgres']) {
      result = { skipped: 'skipped (--no-postgres)', inv: new Invariants(), stats: {} };
    } else if (section.postgres && !pgUp && process.env.CI !== 'true') {
      // As the PostgreSQL unit tests decide (test/support/postgres.ts): skipped with the reason, failed in CI.
      result = {
        skipped: `skipped: PostgreSQL is not reachable at ${pgUrl} (with CI=true this fails)`,
        inv: new Invariants(),
        stats: {},
      };
    } else if (section.postgres && !pgUp) {
      const inv = new Invariants();
      inv.fail('postgres', `PostgreSQL is not reachable at ${pgUrl}`);
      result = { inv, stats: {} };
    } else {
      let timer;
      const progress = process.stdout.isTTY
        ? (text) => process.stdout.write(`\r  ${section.id}: ${text}\u001b[K`)
        : undefined;
      try {
        result = await Promise.race([
          section.run({ scope, seed: seed + index * 7919, pgUrl, progress, modeName, mode }),
          new Promise((_, reject) => {
            timer = setTimeout(
              () => reject(new Error(`section time bound of ${bound / 1000} s exceeded`)),
              bound,
            );
          }),
        ]);
      } catch (err) {
        const inv = new Invariants();
        for (const [name, description] of Object.entries(section.invariants)) inv.define(name, description);
        inv.fail(
          'section',
          `${section.id} aborted: ${err instanceof Error ? (err.stack ?? err.message) : err}`,
        );
        result = { inv, stats: {} };
      } finally {
        clearTimeout(timer);
        if (progress !== undefined) process.stdout.write('\r\u001b[K');
        await scope.close();
      }
    }
    const durationMs = now() - started;
    const invs = result.inv.toJSON();
    const failed = invs.filter((i) => i.failures.length > 0);
    const entry = {
      id: section.id,
      title: section.title,
      kind: section.kind,
      params: section.kind in mode ? mode[section.kind] : {},
      durationMs,
      boundMs: bound,
      skipped: result.skipped,
      invariants: invs,
      stats: result.stats,
    };
    results.push(entry);
    const status = result.skipped !== undefined ? 'skip' : failed.length === 0 ? 'ok  ' : 'FAIL';
    const held = invs.filter((i) => i.failures.length === 0).length;
    console.log(
      `${status} ${section.id.padEnd(15)} ${result.stats.summaryLine ?? result.skipped ?? ''}; invariants ${held}/${invs.length} held (${(durationMs / 1000).toFixed(0)} s)`,
    );
    for (const inv of failed) {
      for (const f of inv.failures.slice(0, 8))
        console.log(`     ✗ ${inv.name}: ${f.split('\n')[0].slice(0, 400)}`);
      if (inv.failures.length > 8) console.log(`     ✗ ${inv.name}: … ${inv.failures.length - 8} more`);
    }
  }
  const totalMs = now() - runStarted;
  const all = results.flatMap((r) => (r.skipped === undefined ? r.invariants : []));
  const passed = all.filter((i) => i.failures.length === 0).length;
  const failedCount = all.length - passed;
  const machine = `${cpus()[0]?.model ?? 'cpu'} × ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}`;
  const run = {
    mode: modeName,
    seed,
    startedAt: new Date(runStarted).toISOString(),
    totalMs,
    machine,
    pgUrl,
  };
  mkdirSync(join(ROOT, 'test-results'), { recursive: true });
  writeFileSync(
    join(ROOT, 'test-results', `chaos-${modeName}.json`),
    `${JSON.stringify({ run, results }, null, 2)}\n`,
  );
  await writeReport(reportPath, run, results);
  console.log(`report: ${reportPath} (${(totalMs / 1000).toFixed(0)} s in all)`);
  console.log(`chaos: ${passed} passed, ${failedCount} failed`);
  return failedCount === 0 ? 0 : 1;
}

let exiting = false;
const bail = async (code, why) => {
  if (exiting) return;
  exiting = true;
  if (why !== undefined) console.error(why);
  await closeAllScopes().catch(() => undefined);
  process.exit(code);
};
process.on('exit', emergencyCleanupSync);
process.on('SIGINT', () => void bail(130, 'chaos: interrupted, cleaning up'));
process.on('SIGTERM', () => void bail(143, 'chaos: terminated, cleaning up'));
process.on('unhandledRejection', (err) => {
  console.error(`chaos: unhandled rejection: ${err instanceof Error ? err.stack : err}`);
});

main().then(
  (code) => bail(code),
  (err) =>
    bail(
      2,
      err?.usage ||
        err?.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ||
        err?.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE'
        ? `chaos: ${err.message}\n${USAGE}`
        : `chaos: ${err instanceof Error ? (err.stack ?? err.message) : err}\nchaos: 0 passed, 1 failed`,
    ),
);
