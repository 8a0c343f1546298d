// Types shared by the benchmark's parts: options, targets, scenarios, samples, summarised rows and the report.
import type { ChildProcess } from 'node:child_process';
import type { StoreSize } from './config.js';

/** The command line, after the preset and explicit flags are combined. */
export interface Params {
  help: boolean;
  mode: 'quick' | 'default' | 'smoke';
  /** Where latest.json and latest.md go. */
  out: string;
  /** Seconds of one measured run (HTTP rows under autocannon: whole seconds, unless `amount` is set). */
  duration: number;
  /** HTTP rows: each run ends after this many requests instead of lasting `duration` (the smoke run's). */
  amount?: number | undefined;
  rounds: number;
  warmup: number;
  connections: number;
  pipelining: number;
  cpuProf: string | undefined;
  pg: string;
  noPg: boolean;
  noScale: boolean;
  only: RegExp | undefined;
}

/** A request in autocannon's options shape (the pre-flight checks send the top-level one once with fetch). */
export interface LoadRequest {
  method: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  requests?: RequestStep[];
}

/** One entry of autocannon's `requests` list: a request, or a function rebuilding it before each send. */
export type RequestStep = LoadRequest | { setupRequest: (request: LoadRequest) => LoadRequest };

/** What a stored-task file holds once bench/children/scale-tasks.ts has filled it. */
export interface FilledStore {
  count: number;
  ms: number;
  bytes: number;
  sample: string[];
}

export type FillSummary = Omit<FilledStore, 'sample'>;

export interface ScaleFill {
  small: FilledStore;
  large: FilledStore;
  totalMs: number;
}

export type SleepFill = Partial<Record<StoreSize, FillSummary>> & { totalMs: number };

/** The PostgreSQL stored-task schemas of the operator list rows, once filled (bench/harness/pg-fill.ts). */
export interface PgScaleFill {
  small: FillSummary;
  large: FillSummary;
  totalMs: number;
}

/** What a latency row's run needs of its target (all the latency client process is handed). */
export interface TargetView {
  key: string;
  url: string;
  urls: string[];
  store?: string | undefined;
}

/** One started child process: its name, the process and its URL (`ipc:<key>` for a child driven over IPC). */
export interface StartedProcess {
  key: string;
  child: ChildProcess;
  url: string;
}

/** A started server (all its replicas): `url` and `child` are the first replica's. */
export interface Target extends TargetView, StartedProcess {
  children: ChildProcess[];
  memoryFile?: string;
  scale?: FilledStore;
}

/** Per-row state made by a row's setup: the task ids it reads, and where its runs have got to. */
export interface RowState {
  ids: string[];
  runs?: number;
  next?: number;
}

export interface SampleCounts {
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  seconds: number;
}

/** How long the worker took to finish what a creation run left queued (a settle step's fields). */
export interface DrainInfo {
  backlog: number;
  drainMs: number;
}

/**
 * Where the machine's CPU went during a pg row's run (harness/cpu-window.ts): µs per operation, cores as averages
 * over the run; null where /proc does not tell (another OS, PostgreSQL out of view).
 */
export interface CpuFigures {
  /** PostgreSQL's CPU per operation: the row's own backends, the background processes and the postmaster. */
  pgCpuUs: number | null;
  /** Every `postgres` process's CPU per operation, other clients' backends and exited backends included. */
  pgAllCpuUs: number | null;
  /** The load generator's (the harness process's) CPU per operation; null for rows that bring their own load. */
  loadCpuUs: number | null;
  /** The kernel's interrupt work (irq + softirq of /proc/stat, in no process's time) per operation. */
  kernelUs: number | null;
  /** Cores busy on average (every process, the kernel's interrupt work, time stolen by the hypervisor). */
  busyCores: number | null;
  /** Cores taken by other work: busy − the target's, PostgreSQL's own, the load generator's and the kernel's. */
  otherCores: number | null;
  /** Seconds between the two readings (a little longer than the run: its start-up and end are inside). */
  windowS: number | null;
}

export interface ThroughputSample extends SampleCounts, Partial<DrainInfo>, Partial<CpuFigures> {
  rps: number;
  p50: number;
  p99: number;
  cpuUs?: number | null;
  writtenKb?: number | null;
  /** pg rows: writing transactions PostgreSQL committed per operation (harness/pg-xacts.ts). */
  xactsPerOp?: number | null;
  /**
   * pg creation rows: the replicas' creation batches during the run, from their /metrics
   * (harness/creation-batches.ts): creations per batch and a batch's mean round trip in ms.
   */
  batchTasks?: number | null;
  batchMs?: number | null;
}

export interface ByStatus<T> {
  working: T;
  completed: T;
}

export interface LatencySample extends SampleCounts {
  rps: number;
  p50: number | null;
  p99: number | null;
  latencies: number[];
  // Push rows.
  steps?: number;
  byStatus?: ByStatus<number[]>;
  fromCause?: ByStatus<number[]>;
  coalesced?: number;
  pollRtt?: number[];
  discovered?: ByStatus<number[]>;
  serverShare?: { first: number[]; last: number[] };
  stepWaits?: Array<[number, number]>;
  updateP50?: number | null;
  updateP99?: number | null;
  // Wake-up rows.
  intervalMs?: number;
  missed?: number;
}

export interface MemorySample extends SampleCounts {
  bytesPerStream: number;
  heapPerStream: number;
  externalPerStream: number;
  rssPerStream: number;
  streams: number;
}

export interface FootprintSample extends SampleCounts {
  rssGrowth: number;
  heapGrowth: number;
  rss: number;
  sleeping: number;
}

export type Sample = ThroughputSample | LatencySample | MemorySample | FootprintSample;
export type Rounded<S> = S & { round: number };

/**
 * A throughput target against row `vs`: met when median ops/s ÷ its median ops/s is at least `min`, or (`maxCpu`)
 * when median CPU µs/op ÷ its median CPU µs/op is at most `maxCpu`.
 */
export type ThroughputTarget =
  { vs: string; min: number; maxCpu?: undefined } | { vs: string; maxCpu: number; min?: undefined };

/** A latency target: p99 ÷ the reference's p99 below p99Ratio, p50 ÷ its p50 at most p50Ratio. */
export interface LatencyTargetSpec {
  text: string;
  p99Ratio?: number;
  p50Ratio?: number;
  /** The reference: the baseline row by default, the row's own poller, or the advertised poll interval. */
  vs?: 'poll' | 'interval';
}

export interface FootprintTargetSpec {
  text: string;
  maxRatio: number;
}

export type Verify = (
  status: number,
  text: string,
  target: Target,
) => string | undefined | Promise<string | undefined>;

interface ScenarioBase {
  name: string;
  server: string;
  baseline: string | null;
  /** PostgreSQL (skipped without it), stored-task stores (skipped by --no-scale), or both. */
  needs?: 'pg' | 'scale' | 'pg-scale';
  setup?: (target: Target) => RowState | undefined | Promise<RowState | undefined>;
}

/** A throughput row under autocannon load. */
export interface HttpScenario extends ScenarioBase {
  kind?: undefined;
  request: (target: Target, state: RowState | undefined) => LoadRequest;
  verify?: Verify;
  settle?: (target: Target, state: RowState | undefined) => Promise<DrainInfo>;
  also?: string[];
  targets?: ThroughputTarget[];
}

/** A throughput row measured by a raw baseline child. */
export interface RawScenario extends ScenarioBase {
  kind?: undefined;
  run: (target: Target, state: RowState | undefined, seconds: number) => Promise<ThroughputSample>;
  also?: string[];
  targets?: ThroughputTarget[];
}

export interface LatencyScenario extends ScenarioBase {
  kind: 'latency';
  run: (target: TargetView, state: RowState | undefined, seconds: number) => Promise<LatencySample>;
  target?: LatencyTargetSpec;
}

export interface MemoryScenario extends ScenarioBase {
  kind: 'memory';
  run: (target: Target, state: RowState | undefined, seconds: number) => Promise<MemorySample>;
}

export interface FootprintScenario extends ScenarioBase {
  kind: 'footprint';
  run: (target: Target) => Promise<FootprintSample>;
  target?: FootprintTargetSpec;
}

export type Scenario = HttpScenario | RawScenario | LatencyScenario | MemoryScenario | FootprintScenario;
export type RunScenario = Exclude<Scenario, HttpScenario>;

export const isHttpScenario = (s: Scenario): s is HttpScenario => 'request' in s;

/**
 * A group of rows measured together: their stores filled and servers started for it, their rounds interleaved, their
 * results written as soon as it completes (the rows they are compared with are in it, or in an earlier section).
 */
export interface Section {
  /** One word (the smoke run's lines, the report). */
  id: string;
  title: string;
  rows: Scenario[];
}
