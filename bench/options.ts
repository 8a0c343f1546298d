// The command line: presets, flags, usage text.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { TEST_POSTGRES_URL } from '../test/support/postgres-url.js';
import { SCALE_LARGE, SCALE_SMALL } from './config.js';
import { fmtCount } from './format.js';
import type { Params } from './types.js';

type Preset = Pick<Params, 'duration' | 'rounds' | 'warmup' | 'connections' | 'pipelining'>;

const PRESETS: Record<'default' | 'quick', Preset> = {
  default: { duration: 3, rounds: 5, warmup: 2, connections: 50, pipelining: 1 },
  quick: { duration: 1, rounds: 3, warmup: 1, connections: 50, pipelining: 1 },
};

export function describePreset(p: Preset): string {
  return `${p.rounds} rounds × ${p.duration} s, ${p.warmup} s warm-up, ${p.connections} connections`;
}

export const USAGE = `usage: npm run bench -- [flags]
  --quick              smoke run (~2.5 min): ${describePreset(PRESETS.quick)}
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

export function parseParams(argv: string[]): Params {
  const values = parseFlags(argv);
  const preset = values.quick ? PRESETS.quick : PRESETS.default;
  const pick = (flag: keyof Preset, allowZero?: boolean) => {
    const raw = values[flag];
    return raw === undefined ? preset[flag] : positiveInt(raw, flag, allowZero);
  };
  return {
    help: values.help === true,
    mode: values.quick ? 'quick' : 'default',
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
