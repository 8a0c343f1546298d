// What the parts of a crash or clock section share: its parameters, scope, generator, invariants and figures.
import type { Invariants } from '../harness/invariants.js';
import type { Rng } from '../harness/random.js';
import type { Scope } from '../harness/scope.js';
import type { ChaosParams, SectionStats } from '../types.js';
import type { Analysis } from './analysis-types.js';
import type { StoreLocation } from './store.js';

export interface CrashStats extends SectionStats, Partial<Omit<Analysis, 'ttlProbes'>> {
  kills: number;
  killsByPoint: Record<string, number>;
  restarts: number;
  startFailures: number;
  tasks: number;
  orphansAdopted: number;
  createRetries: number;
  /** Replies clients retried, by kind. */
  transient: Record<string, number>;
  answersSent: number;
  answersAcked: number;
  cancelsAcked: number;
  ttlProbes: number;
  keys: {
    keyed: number;
    hedged: number;
    dropped: Record<string, number>;
    lostToKills: number;
    retried: number;
    joined: number;
  };
  jumps?: number;
  maxOffsetMs?: number;
  jumpList?: string[];
  chaosMs?: number;
  settleMs?: number;
}

export interface CrashRun {
  backend: 'sqlite' | 'postgres';
  params: ChaosParams;
  /** Clock section: jumps instead of kills. */
  jumping: boolean;
  scope: Scope;
  rng: Rng;
  inv: Invariants;
  stats: CrashStats;
  store: StoreLocation;
  dir: string;
  logFile: string;
  progress: ((text: string) => void) | undefined;
}

export function newCrashStats(): CrashStats {
  return {
    kills: 0,
    killsByPoint: {},
    restarts: 0,
    startFailures: 0,
    tasks: 0,
    orphansAdopted: 0,
    createRetries: 0,
    transient: {},
    answersSent: 0,
    answersAcked: 0,
    cancelsAcked: 0,
    ttlProbes: 0,
    keys: { keyed: 0, hedged: 0, dropped: {}, lostToKills: 0, retried: 0, joined: 0 },
  };
}

/** Adds one to a counter of a tally. */
export const tally = (counts: Record<string, number>, key: string): void => {
  counts[key] = (counts[key] ?? 0) + 1;
};
