// Runs one section in its own scope (processes, temp dirs, PostgreSQL schemas, all released even on failure) and
// its own time bound, or skips it; prints its line ("ok   <id> …", "FAIL <id> …" or "skip <id> …").
import { Invariants } from './harness/invariants.js';
import { Scope } from './harness/scope.js';
import { now } from './harness/time.js';
import type { RunOptions } from './options.js';
import type { Section, SectionEntry, SectionResult } from './types.js';

const boundFor = (section: Section, options: RunOptions): number =>
  section.kind === 'oracles' ? 60_000 : options.mode[section.kind].boundMs;

const emptyResult = (skipped?: string): SectionResult => ({ skipped, inv: new Invariants(), stats: {} });

/** Why a PostgreSQL section does not run, or its failure when PostgreSQL is required (CI=true). */
function postgresVerdict(section: Section, options: RunOptions, pgUp: boolean): SectionResult | undefined {
  if (!section.postgres) return undefined;
  if (options.noPostgres) return emptyResult('skipped (--no-postgres)');
  if (pgUp) return undefined;
  // As the PostgreSQL unit tests decide (test/support/postgres.ts): skipped with the reason, failed in CI.
  if (process.env.CI !== 'true')
    return emptyResult(`skipped: PostgreSQL is not reachable at ${options.pgUrl} (with CI=true this fails)`);
  const inv = new Invariants();
  inv.fail('postgres', `PostgreSQL is not reachable at ${options.pgUrl}`);
  return { inv, stats: {} };
}

async function runBounded(
  section: Section,
  options: RunOptions,
  index: number,
  bound: number,
): Promise<SectionResult> {
  const scope = new Scope(section.id);
  let timer: NodeJS.Timeout | undefined;
  const progress = process.stdout.isTTY
    ? (text: string) => process.stdout.write(`\r  ${section.id}: ${text}\u001b[K`)
    : undefined;
  try {
    const { seed, pgUrl, modeName, mode } = options;
    return await Promise.race([
      section.run({ scope, seed: seed + index * 7919, pgUrl, progress, modeName, mode }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`section time bound of ${bound / 1000} s exceeded`)),
          bound,
        );
      }),
    ]);
  } catch (err) {
    const inv = Invariants.of(section.invariants);
    inv.fail('section', `${section.id} aborted: ${err instanceof Error ? (err.stack ?? err.message) : err}`);
    return { inv, stats: {} };
  } finally {
    clearTimeout(timer);
    if (progress !== undefined) process.stdout.write('\r\u001b[K');
    await scope.close();
  }
}

function printLine(entry: SectionEntry): void {
  const invs = entry.invariants;
  const failed = invs.filter((i) => i.failures.length > 0);
  const status = entry.skipped !== undefined ? 'skip' : failed.length === 0 ? 'ok  ' : 'FAIL';
  const held = invs.length - failed.length;
  console.log(
    `${status} ${entry.id.padEnd(15)} ${entry.stats.summaryLine ?? entry.skipped ?? ''}; invariants ${held}/${invs.length} held (${(entry.durationMs / 1000).toFixed(0)} s)`,
  );
  for (const inv of failed) {
    for (const f of inv.failures.slice(0, 8))
      console.log(`     ✗ ${inv.name}: ${f.split('\n')[0]?.slice(0, 400)}`);
    if (inv.failures.length > 8) console.log(`     ✗ ${inv.name}: … ${inv.failures.length - 8} more`);
  }
}

/** Runs (or skips) section number `index` and prints its line; returns its entry of the results. */
export async function runSection(
  section: Section,
  index: number,
  options: RunOptions,
  pgUp: boolean,
): Promise<SectionEntry> {
  const started = now();
  const bound = boundFor(section, options);
  const result =
    postgresVerdict(section, options, pgUp) ?? (await runBounded(section, options, index, bound));
  const entry: SectionEntry = {
    id: section.id,
    title: section.title,
    kind: section.kind,
    params: section.kind === 'oracles' ? {} : options.mode[section.kind],
    durationMs: now() - started,
    boundMs: bound,
    skipped: result.skipped,
    invariants: result.inv.toJSON(),
    stats: result.stats,
  };
  printLine(entry);
  return entry;
}
