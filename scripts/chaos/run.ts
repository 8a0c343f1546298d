// `npm run test:chaos` (full run) and `npm run test:chaos:ci` (--ci: small, bounded parameters): the reliability
// suite of docs/reliability.md. Runs the sections one after another, each in its own scope and time bound
// (section-runner.ts), prints one line per section and finally `chaos: N passed, M failed` (invariants), writes
// the results (test-results/chaos-<mode>.json and the report), and exits non-zero on any violation.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { pgReachable } from './harness/postgres.js';
import { ROOT } from './harness/paths.js';
import { closeAllScopes, emergencyCleanupSync } from './harness/scope.js';
import { now } from './harness/time.js';
import { parseOptions, USAGE, UsageError, type RunOptions } from './options.js';
import { writeReport } from './report.js';
import { runSection } from './section-runner.js';
import type { RunInfo, SectionEntry } from './types.js';

function machine(): string {
  const cpu = cpus();
  return `${cpu[0]?.model ?? 'cpu'} × ${cpu.length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}`;
}

/** Runs the selected sections; returns the exit code (0 when every invariant held). */
async function runAll(options: RunOptions): Promise<number> {
  const { modeName, seed, selected, pgUrl } = options;
  console.log(`chaos: ${modeName} run, seed ${seed}, sections ${selected.map((s) => s.id).join(', ')}`);
  const pgUp = selected.some((s) => s.postgres) && !options.noPostgres ? await pgReachable(pgUrl) : false;
  const results: SectionEntry[] = [];
  const runStarted = now();
  for (const [index, section] of selected.entries())
    results.push(await runSection(section, index, options, pgUp));
  const totalMs = now() - runStarted;
  const all = results.flatMap((r) => (r.skipped === undefined ? r.invariants : []));
  const passed = all.filter((i) => i.failures.length === 0).length;
  const failedCount = all.length - passed;
  const run: RunInfo = {
    mode: modeName,
    seed,
    startedAt: new Date(runStarted).toISOString(),
    totalMs,
    machine: machine(),
    pgUrl,
  };
  mkdirSync(join(ROOT, 'test-results'), { recursive: true });
  writeFileSync(
    join(ROOT, 'test-results', `chaos-${modeName}.json`),
    `${JSON.stringify({ run, results }, null, 2)}\n`,
  );
  await writeReport(options.reportPath, run, results);
  console.log(`report: ${options.reportPath} (${(totalMs / 1000).toFixed(0)} s in all)`);
  console.log(`chaos: ${passed} passed, ${failedCount} failed`);
  return failedCount === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (options === 'help') {
    console.log(USAGE);
    return 0;
  }
  return runAll(options);
}

let exiting = false;
const bail = async (code: number, why?: string): Promise<void> => {
  if (exiting) return;
  exiting = true;
  if (why !== undefined) console.error(why);
  await closeAllScopes().catch(() => undefined);
  process.exit(code);
};

const isUsageError = (err: unknown): err is Error =>
  err instanceof UsageError ||
  ['ERR_PARSE_ARGS_UNKNOWN_OPTION', 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE'].includes(
    String((err as { code?: unknown } | undefined)?.code),
  );

process.on('exit', emergencyCleanupSync);
process.on('SIGINT', () => void bail(130, 'chaos: interrupted, cleaning up'));
process.on('SIGTERM', () => void bail(143, 'chaos: terminated, cleaning up'));
process.on('unhandledRejection', (err) => {
  console.error(`chaos: unhandled rejection: ${err instanceof Error ? err.stack : err}`);
});

main().then(
  (code) => bail(code),
  (err: unknown) =>
    bail(
      2,
      isUsageError(err)
        ? `chaos: ${err.message}\n${USAGE}`
        : `chaos: ${err instanceof Error ? (err.stack ?? err.message) : err}\nchaos: 0 passed, 1 failed`,
    ),
);
