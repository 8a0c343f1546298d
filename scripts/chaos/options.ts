// The command line of the suite: flags, usage text, and the run options they make.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { TEST_POSTGRES_URL } from '../../test/support/postgres-url.js';
import { ROOT } from './harness/paths.js';
import { modeParams } from './modes.js';
import { SECTIONS } from './sections.js';
import type { ModeName, ModeParams, Section } from './types.js';

export const USAGE = `usage: npx tsx scripts/chaos/run.ts [--ci] [flags]
  --ci                 small parameters for CI (a few minutes on 2 cores); default: the full run
  --only LIST          sections to run: oracles, crash-sqlite, crash-postgres, faults-postgres, faults-sqlite,
                       faults-disk-full, clock-sqlite, clock-postgres, fuzz, load, abuse-sqlite, abuse-postgres,
                       idle-connections, operator-streams, gateway-sqlite, gateway-postgres, parallel-sqlite,
                       parallel-postgres; a name before the dash (crash, clock, faults, abuse, gateway, parallel)
                       runs every section of that name
  --seed N             seed of every random choice (default: random; printed)
  --pg URL             PostgreSQL for the PostgreSQL sections (default $DURABLE_MCP_TEST_POSTGRES_URL or
                       postgres://postgres@127.0.0.1:5432/test)
  --no-postgres        skip the PostgreSQL sections (when PostgreSQL is unreachable they are skipped anyway,
                       except with CI=true, where they fail)
  --kills N            kills per backend in the crash sections
  --fuzz-requests N    generated requests in the fuzz section
  --load-tasks N --load-subscribers N --load-seconds N    load section size
  --report PATH        results table (default: reports/reliability.md for the full run, test-results/chaos-ci.md for --ci)
  --help               this text`;

export interface RunOptions {
  modeName: ModeName;
  mode: ModeParams;
  seed: number;
  pgUrl: string;
  noPostgres: boolean;
  selected: Section[];
  reportPath: string;
}

/** A mistake on the command line: printed with the usage text. */
export class UsageError extends Error {}

function int(v: string, name: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new UsageError(`--${name} must be a non-negative integer`);
  return n;
}

const FLAGS = {
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
} as const;

/** Whether `--only` name `id` names section `s`: its id, or the name before its id's dash (`gateway`). */
const names = (id: string, s: Section): boolean => s.id === id || s.id.startsWith(`${id}-`);

/** The sections `--only` names (all when absent). */
function selectSections(only: string | undefined): Section[] {
  const ids = only
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const id of ids ?? []) {
    if (!SECTIONS.some((s) => names(id, s))) throw new UsageError(`--only: unknown section ${id}`);
  }
  return SECTIONS.filter((s) => ids === undefined || ids.some((id) => names(id, s)));
}

/** The run options, or 'help' when --help asks for the usage text. */
export function parseOptions(argv: string[]): RunOptions | 'help' {
  const { values } = parseArgs({ args: argv, options: FLAGS });
  if (values.help) return 'help';
  const modeName: ModeName = values.ci ? 'ci' : 'full';
  const mode = modeParams(modeName);
  if (values.kills !== undefined) mode.crash.kills = int(values.kills, 'kills');
  if (values['fuzz-requests'] !== undefined)
    mode.fuzz.requests = int(values['fuzz-requests'], 'fuzz-requests');
  if (values['load-tasks'] !== undefined) mode.load.tasks = int(values['load-tasks'], 'load-tasks');
  if (values['load-subscribers'] !== undefined)
    mode.load.subscribers = int(values['load-subscribers'], 'load-subscribers');
  if (values['load-seconds'] !== undefined) mode.load.seconds = int(values['load-seconds'], 'load-seconds');
  const seed = values.seed !== undefined ? int(values.seed, 'seed') : Math.floor(Math.random() * 2 ** 31);
  const reportPath =
    values.report ??
    (modeName === 'full'
      ? join(ROOT, 'reports', 'reliability.md')
      : join(ROOT, 'test-results', 'chaos-ci.md'));
  return {
    modeName,
    mode,
    seed,
    pgUrl: values.pg ?? TEST_POSTGRES_URL,
    noPostgres: values['no-postgres'] === true,
    selected: selectSections(values.only),
    reportPath,
  };
}
