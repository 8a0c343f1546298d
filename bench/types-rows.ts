// Types of the summarised rows and of the report written to bench/results/latest.json.
import type {
  ByStatus,
  CpuFigures,
  FootprintSample,
  FootprintTargetSpec,
  LatencyTargetSpec,
  MemorySample,
  Rounded,
  ThroughputSample,
  ThroughputTarget,
} from './types.js';

export interface AlsoRatio {
  name: string;
  ratio: number | null;
}

/** A target with its measured ratio (of ops/s, or of CPU µs/op for a `maxCpu` target) and whether it is met. */
export type TargetResult = ThroughputTarget & {
  ratio: number | null;
  met: boolean | null;
};

export interface ThroughputRow {
  name: string;
  server: string;
  baseline: string | null;
  kind?: undefined;
  also?: AlsoRatio[];
  targets?: TargetResult[];
  unit: string;
  samples: Array<Rounded<ThroughputSample>>;
  median: {
    rps: number;
    p50: number;
    p99: number;
    cpuUs: number | null;
    writtenKb: number | null;
    xactsPerOp?: number | null;
    batchTasks?: number | null;
    batchMs?: number | null;
  } & Partial<CpuFigures>;
  min: { rps: number };
  max: { rps: number };
  non2xx: number;
  errors: number;
  drain?: { maxBacklog: number; maxMs: number };
  ratio?: number | null;
}

export interface PooledStats {
  events: number;
  p50: number | null;
  p99: number | null;
  max: number;
  p99Range: { min: number; max: number };
}

export interface Percentiles {
  events: number;
  p50: number | null;
  p99: number | null;
}

export interface RunQueueSummary {
  steps: number;
  slowSteps: number;
  slowWaitMs: number | null;
  fastWaitMs: number | null;
}

export interface P50P99 {
  p50: number;
  p99: number;
}

/** The push rows' extra figures (the `server` field then holds the server's share instead of its key). */
export interface PushFigures {
  byStatus: ByStatus<Percentiles>;
  fromCause: ByStatus<Percentiles>;
  coalesced: number;
  answered: number;
  poll: PooledStats & { ratio?: P50P99 };
  runQueue: RunQueueSummary | null;
  discovery: ByStatus<Percentiles>;
  server: { first: PooledStats; last: PooledStats };
  updateP50: number | undefined;
  updateP99: number | undefined;
}

export interface LatencyRow extends PooledStats, Partial<Omit<PushFigures, 'server'>> {
  name: string;
  server: string | PushFigures['server'];
  baseline: string | null;
  kind: 'latency';
  unit: string;
  samples: Array<Record<string, unknown>>;
  intervalMs?: number;
  missed?: number;
  target?: LatencyTargetSpec & { ratio?: P50P99; met?: boolean };
  non2xx: number;
  errors: number;
  ratio?: P50P99 | null;
  interval?: { ms: number; p50: number; p99: number };
  /** The stored-task rows: requests per second of the sequential client, the median over rounds. */
  opsPerSecond?: number;
}

export interface MemoryRow {
  name: string;
  server: string;
  baseline: string | null;
  kind: 'memory';
  unit: string;
  streams: number;
  samples: Array<Rounded<MemorySample>>;
  median: { bytesPerStream: number; heapPerStream: number; externalPerStream: number; rssPerStream: number };
  min: { bytesPerStream: number };
  max: { bytesPerStream: number };
  non2xx: number;
  errors: number;
  ratio?: number | null;
}

export interface FootprintRow {
  name: string;
  server: string;
  baseline: string | null;
  kind: 'footprint';
  unit: string;
  samples: Array<Rounded<FootprintSample>>;
  sleeping: number;
  median: { rssGrowth: number; heapGrowth: number; rss: number };
  min: { rssGrowth: number };
  max: { rssGrowth: number };
  target?: FootprintTargetSpec & { met?: boolean | null };
  non2xx: number;
  errors: number;
  ratio?: { rss: number; heap: number } | null;
}

export type Row = ThroughputRow | LatencyRow | MemoryRow | FootprintRow;

/** A row that failed (a server that did not start, a setup, a pre-flight check or a run that threw): left out. */
export interface FailedRow {
  name: string;
  /** The id of its section. */
  section: string;
  /** Where it failed: `start`, `setup`, `pre-flight`, `warm-up`, `round N` or `section` (the section as a whole). */
  stage: string;
  error: string;
}

/**
 * A section of the run as the report shows it: `done` (every row measured, none with errors), `failed` (some rows
 * failed or had errors), `skipped` (its rows left out, with the reason) or `not run` (the run stopped before it, or
 * has not reached it yet).
 */
export interface SectionReport {
  id: string;
  title: string;
  status: 'done' | 'failed' | 'skipped' | 'not run';
  /** Rows measured, rows that failed, and measured rows with non-2xx responses or socket errors. */
  measured: number;
  failed: number;
  withErrors: number;
  seconds?: number;
  /** Why it was skipped. */
  skipped?: string;
}
