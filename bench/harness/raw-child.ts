// The raw baselines' runs: a child process (SQLite or pg) runs one operation back to back and reports.
import { round1 } from '../stats.js';
import type { RawScenario, Target, ThroughputSample } from '../types.js';
import { askChild } from './processes.js';

interface ChildMeasurement {
  count: number;
  seconds: number;
  p50: number;
  p99: number;
  cpuUs: number;
}

/** A measurement run by a raw baseline child (SQLite or pg): `op` back to back for `seconds`. */
export function rawChild(op: 'insert' | 'notify' | 'select'): RawScenario['run'] {
  return async (target: Target, _state, seconds): Promise<ThroughputSample> => {
    const m = await askChild<ChildMeasurement>(target, { op, seconds }, seconds * 1000 + 30_000);
    return {
      rps: round1(m.count / m.seconds),
      p50: m.p50,
      p99: m.p99,
      cpuUs: m.cpuUs,
      ok: m.count,
      non2xx: 0,
      errors: 0,
      timeouts: 0,
      seconds: Math.round(m.seconds * 1000) / 1000,
    };
  };
}
