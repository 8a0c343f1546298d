// The command line: presets, flags, usage text.
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { TEST_POSTGRES_URL } from '../test/support/postgres-url.js';
import { RESULTS_DIR, ROOT, SCALE_LARGE, SCALE_SMALL, SMOKE, SMOKE_ENV } from './config.js';
import { fmtCount } from './format.js';
import type { Params } from './types.js';

type Preset = Pick<Params, 'duration' | 'rounds' | 'warmup' | 'connections' | 'pipelining' | 'amount'>;

const PRESETS: Record<Params['mode'], Preset> = {
  default: { duration: 3, rounds: 5, warmup: 2, connections: 50, pipelining: 1 },
  quick: { duration: 1, rounds: 3, warmup: 1, connections: 50, pipelining: 1 },
  // Seconds per section: tiny workloads (bench/config.ts), HTTP runs of 100 requests, other runs of 0.25 s.
  smoke: { duration: 0.25, rounds: 1, warmup: 0, connections: 4, pipelining: 1, amount: 100 },
};

/** Where a smoke run writes its results (bench/results/ keeps the last measured run's). */
const SMOKE_OUT = join(ROOT, 'test-results', 'bench-smoke');

export function describePreset(p: Preset): string {
  const runs =
    p.amount === undefined ? `${p.duration} s` : `${p.amount} requests (other rows ${p.duration} s)`;
  return `${p.rounds} rounds × ${runs}, ${p.warmup} s warm-up, ${p.connections} connections`;
}

export const USAGE = `usage: npm run bench -- [flags]
  --quick              short run (~3.5 min): ${describePreset(PRESETS.quick)}
  --smoke              checks that every row runs, in about a minute: tiny workloads, ${PRESETS.smoke.rounds} round of ${PRESETS.smoke.amount} requests
                       or ${PRESETS.smoke.duration} s per row, nothing measured; results in ${relative(ROOT, SMOKE_OUT)}/ (or --out)
  --duration SEC       seconds per measured run (default ${PRESETS.default.duration})
  --rounds N           interleaved rounds per scenario (default ${PRESETS.default.rounds})
  --warmup SEC         discarded warm-up run per scenario before the rounds (default ${PRESETS.default.warmup}; 0 skips)
  --connections N      concurrent keep-alive connections (default ${PRESETS.default.connections})
  --pipelining N       requests in flight per connection (default ${PRESETS.default.pipelining})
  --pg URL             PostgreSQL for the pg rows (default ${TEST_POSTGRES_URL}; env DURABLE_MCP_TEST_POSTGRES_URL)
  --no-pg              skip the PostgreSQL rows
  --no-scale           skip the ${fmtCount(SCALE_SMALL)} vs ${fmtCount(SCALE_LARGE)} stored-task rows (and filling their stores)
  --only REGEX         only the rows whose name matches (case-insensitive), with the rows they are compared with
  --cpu-prof DIR       run our servers under node --cpu-prof, writing DIR/<server>.cpuprofile
  --out DIR            write latest.json and latest.md to DIR (default ${relative(ROOT, RESULTS_DIR)})
  --help               this text`;

/** A bad command line (exit code 2, with the usage text). */
export class UsageError extends Error {}

function positiveInt(raw: string, flag: string, allowZero = false): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < (allowZero ? 0 : 1)) {
    throw new UsageError(`--${flag} must be ${allowZero ? 'a non-negative' : 'a positive'} integer`);
  }
  return n;
}

function parseFlags(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: {
        quick: { type: 'boolean' },
        smoke: { type: 'boolean' },
        out: { type: 'string' },
        duration: { type: 'string' },
        rounds: { type: 'string' },
        warmup: { type: 'string' },
        connections: { type: 'string' },
        pipelining: { type: 'string' },
        'cpu-prof': { type: 'string' },
        pg: { type: 'string' },
        'no-pg': { type: 'boolean' },
        'no-scale': { type: 'boolean' },
        only: { type: 'string' },
        help: { type: 'boolean' },
      },
    }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function onlyPattern(raw: string): RegExp {
  try {
    return new RegExp(raw, 'i');
  } catch (err) {
    throw new UsageError(`--only: ${(err as Error).message}`);
  }
}

/** The preset the flags choose; `--smoke` only when bench/run.ts has switched the sizes (SMOKE) too. */
function modeOf(values: { quick?: boolean; smoke?: boolean }): Params['mode'] {
  if (values.quick && values.smoke) throw new UsageError('--quick and --smoke exclude each other');
  if (values.smoke && !SMOKE) throw new UsageError(`--smoke: run bench/run.ts (it sets ${SMOKE_ENV}=1)`);
  return values.smoke ? 'smoke' : values.quick ? 'quick' : 'default';
}

export function parseParams(argv: string[]): Params {
  const values = parseFlags(argv);
  const mode = modeOf(values);
  const preset = PRESETS[mode];
  const pick = (flag: Exclude<keyof Preset, 'amount'>, allowZero?: boolean) => {
    const raw = values[flag];
    return raw === undefined ? preset[flag] : positiveInt(raw, flag, allowZero);
  };
  const out = values.out ?? (mode === 'smoke' ? SMOKE_OUT : RESULTS_DIR);
  return {
    help: values.help === true,
    mode,
    out: resolve(out),
    // An explicit --duration gives the HTTP rows that duration again.
    amount: values.duration === undefined ? preset.amount : undefined,
    duration: pick('duration'),
    rounds: pick('rounds'),
    warmup: pick('warmup', true),
    connections: pick('connections'),
    pipelining: pick('pipelining'),
    cpuProf: values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']),
    pg: values.pg ?? TEST_POSTGRES_URL,
    noPg: values['no-pg'] === true,
    noScale: values['no-scale'] === true,
    only: values.only === undefined ? undefined : onlyPattern(values.only),
  };
}
