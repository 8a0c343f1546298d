// What the analysis of a crash or clock section reads (the store, the log, the clients' records) and the figures it
// returns: the shapes analyse.ts and analyse-task.ts share.
import type { Invariants } from '../harness/invariants.js';
import type { LogLine } from '../harness/log-tail.js';
import type { Spread } from '../stats.js';
import type { AttemptCount, ClientRec, DurableStats, Kill, StepMemo, StoreSnapshot } from './types.js';

export interface AnalyseInput {
  store: StoreSnapshot;
  lines: LogLine[];
  byTask: Map<string, ClientRec>;
  recs?: ClientRec[];
  sentCids: Set<string>;
  unknownCids: Set<string>;
  kills: Kill[];
  inv: Invariants;
  /** The clock parameters, when the history comes from a clock section. */
  params: { jumps?: number; offsets?: number[] };
}

export interface Analysis {
  storedTasks: number;
  ttlProbes: number;
  completed: number;
  cancelled: number;
  failed: number;
  runs: number;
  resumedRuns: number;
  crashReplays: number;
  stepExecutions: number;
  stepsCommitted: number;
  stepReruns: number;
  fencedRuns: number;
  leaseLost: number;
  maxAttempt: number;
  answersChecked: number;
  midCommit: { committedBeforeKill: number; lostWithProcess: number };
  resumedAfterWait: number;
  durable: DurableStats;
  duplicates: number;
  wakeLate?: Omit<Spread, 'max'>;
  replayDelay?: Spread;
}

/** The log and the store, indexed by task. */
export interface Indexes {
  linesByTask: Map<string, LogLine[]>;
  killedSeq: Map<number, number>;
  killedAt: Map<number, number>;
  stepsByTask: Map<string, Map<string, StepMemo>>;
  attemptsByTask: Map<string, Map<string, AttemptCount>>;
  replayDelays: number[];
}
