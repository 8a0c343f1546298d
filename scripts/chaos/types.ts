// The shapes the runner, the sections and the report share: parameters, section context, results.
import type { InvariantRecord, InvariantTable, Invariants } from './harness/invariants.js';
import type { Scope } from './harness/scope.js';

/** Where the crash sections kill a process (weights of the draw). */
export type KillPoint =
  | 'mid-step'
  | 'mid-commit'
  | 'mid-retry'
  | 'mid-finish'
  | 'mid-answer'
  | 'mid-create'
  | 'mid-startup'
  | 'random';

/** The processes, clients and tasks of a crash or clock section. */
export interface WorkloadParams {
  servers: number;
  concurrency: number;
  leaseMs: number;
  chaosMs: number;
  gapMinMs: number;
  gapMaxMs: number;
  restartMinMs: number;
  restartMaxMs: number;
  inflight: number;
  stepsMin: number;
  stepsMax: number;
  stepMsMin: number;
  stepMsMax: number;
  inputsMax: number;
  cancelRate: number;
  ttlProbes: number;
  boundMs: number;
}

/** Retries, sleeps and keyed creations mixed into the crash sections' tasks. */
export interface DurableParams {
  retryRate: number;
  failMax: number;
  giveUpRate: number;
  backoffMinMs: number;
  backoffMaxMs: number;
  sleepRate: number;
  sleepMsMin: number;
  sleepMsMax: number;
  keyRate: number;
  dropRate: number;
  hedgeRate: number;
}

export interface CrashParams extends WorkloadParams, DurableParams {
  kills: number;
  points: Readonly<Record<KillPoint, number>>;
}

export interface ClockParams extends WorkloadParams {
  jumps: number;
  /** Wall-clock offsets (ms), applied to the processes in turn. */
  offsets: number[];
}

/** What runCrash accepts: the crash parameters or the clock ones. */
export type ChaosParams = WorkloadParams &
  Partial<DurableParams> &
  Partial<Pick<CrashParams, 'kills' | 'points'>> &
  Partial<ClockParams>;

export interface FaultParams {
  pgCycles: ('terminate' | 'refuse' | 'reset' | 'blackhole')[];
  outageMs: number;
  blackholeMs: number;
  busyCycles: number;
  busyHoldMs: number;
  fullCycles: number;
  fullHoldMs: number;
  fullFsMb: number;
  waitBoundMs: number;
  leaseMs: number;
  recoveryBoundMs: number;
  boundMs: number;
}

export interface FuzzParams {
  requests: number;
  parallel: number;
  heapMb: number;
  slowSockets: number;
  slowMs: number;
  rssLimitMb: number;
  boundMs: number;
}

export interface LoadParams {
  tasks: number;
  subscribers: number;
  seconds: number;
  concurrency: number;
  probeEveryMs: number;
  responsiveP99Ms: number;
  responsiveMaxMs: number;
  rssLimitMb: number;
  boundMs: number;
}

export interface AbuseParams {
  /** Workers of the server. */
  concurrency: number;
  /** How long each task holds a worker. */
  workMs: number;
  /** The attacker's backlog of tasks. */
  floodTasks: number;
  listens: number;
  /** Unauthenticated uploads of 3.9 MiB each, at once. */
  uploads: number;
  /** Legacy subscriptions of 3 MiB each. */
  bloatSubscribes: number;
  unserializable: number;
  /** `--max-stored-tasks` of the server. */
  storedLimit: number;
  /** `--max-sessions` of the server (legacy sessions per principal); the attacker opens 10 more. */
  sessionLimit: number;
  probeEveryMs: number;
  rssLimitMb: number;
  boundMs: number;
}

/** The HTTP edge sections: idle connections from one address, and a flood of operator event streams. */
export interface EdgeParams {
  /** `--max-connections` of the server. */
  maxConnections: number;
  /**
   * Sockets the idle attacker keeps (half send nothing, half idle after one request), reopened as they close: more
   * than the cap, and at most 1.5 × it (a burst of new connections larger than the idle ones would close each other).
   */
  idleSockets: number;
  /** Pause of an attacker socket before it opens again (ms). */
  reopenMs: number;
  /** `--headers-timeout-ms` of the server. */
  headersTimeoutMs: number;
  /** How long each attack lasts (ms). */
  attackMs: number;
  /** Pause of the legitimate client between its requests (ms). */
  probeEveryMs: number;
  /** Event streams each of the two operators tries to open. */
  streamAttempts: number;
  /** `--max-admin-streams` and `--max-admin-streams-total` of the server. */
  maxAdminStreams: number;
  maxAdminStreamsTotal: number;
  boundMs: number;
}

/**
 * The gateway sections: `durable-mcp gateway` replicas on one store in front of the SDK v1 test upstream
 * (test/fixtures/gateway/upstream-v1.mjs), clients calling its idempotent and non-idempotent tools, kills of both.
 */
export interface GatewayParams {
  /** Gateway replicas; the last `stdioGateways` of them run the upstream as a stdio child, the others share one HTTP upstream process. */
  gateways: number;
  stdioGateways: number;
  /** `--concurrency` and `--lease-ms` of each replica. */
  concurrency: number;
  leaseMs: number;
  /** `--upstream-connect-timeout-ms` of each replica. */
  connectTimeoutMs: number;
  /**
   * `--upstream-retry` of each replica: attempts of an idempotent call in all. Above the default (5) in the full run,
   * where an upstream is killed every few seconds while calls take up to 1.5 s: five losses in a row happen there.
   */
  upstreamRetry: number;
  /** SIGKILLs planned: of a gateway replica, of the HTTP upstream process, of a replica's stdio upstream child. */
  gatewayKills: number;
  httpUpstreamKills: number;
  stdioUpstreamKills: number;
  chaosMs: number;
  gapMinMs: number;
  gapMaxMs: number;
  /** A killed replica or HTTP upstream starts again after 0 to this many ms. */
  restartMaxMs: number;
  /** Tasks the clients keep in flight, and the most they create in all. */
  inflight: number;
  tasks: number;
  /** How long each upstream call works (its `ms` argument), drawn per task. */
  msMin: number;
  msMax: number;
  /** The share of send_payment (not idempotent) among the calls; the others are slow_sum (idempotent). */
  paymentRate: number;
  boundMs: number;
}

/**
 * The parallel-steps sections: `serve` processes on one store running chaos_parallel tasks (a step, ctx.map beside a
 * step, a step) while the driver SIGKILLs them.
 */
export interface ParallelParams {
  servers: number;
  /** `--concurrency` and `--lease-ms` of each process. */
  concurrency: number;
  leaseMs: number;
  kills: number;
  chaosMs: number;
  gapMinMs: number;
  gapMaxMs: number;
  /** A killed process starts again after 0 to this many ms. */
  restartMaxMs: number;
  /** Tasks created in all, and how many clients create them at once. */
  tasks: number;
  inflight: number;
  /** Items of each task's map, and how many of them run at once. */
  items: number;
  mapConcurrency: number;
  /** How long a step body works (1 to 3 times this). */
  stepMs: number;
  boundMs: number;
}

/** The parameters of one run mode (full or ci), by section kind. */
export interface ModeParams {
  crash: CrashParams;
  faults: FaultParams;
  clock: ClockParams;
  fuzz: FuzzParams;
  load: LoadParams;
  abuse: AbuseParams;
  edge: EdgeParams;
  gateway: GatewayParams;
  parallel: ParallelParams;
}

export type ModeName = 'full' | 'ci';
export type SectionKind = 'oracles' | keyof ModeParams;

/** What every section gets from the runner. */
export interface SectionContext {
  scope: Scope;
  seed: number;
  pgUrl: string;
  /** Progress on a terminal (undefined otherwise). */
  progress: ((text: string) => void) | undefined;
  modeName: ModeName;
  mode: ModeParams;
}

/** Figures of a section; each section adds its own. */
export interface SectionStats {
  summaryLine?: string;
  durationMs?: number;
}

export interface SectionResult {
  inv: Invariants;
  stats: SectionStats;
  /** Why the section did not run. */
  skipped?: string;
}

export interface Section {
  id: string;
  title: string;
  kind: SectionKind;
  postgres?: boolean;
  invariants: InvariantTable;
  run(ctx: SectionContext): Promise<SectionResult>;
}

/** One section's entry of the results (test-results/chaos-<mode>.json and the report). */
export interface SectionEntry {
  id: string;
  title: string;
  kind: SectionKind;
  params: object;
  durationMs: number;
  boundMs: number;
  skipped: string | undefined;
  invariants: InvariantRecord[];
  stats: SectionStats;
}

/** The run as a whole. */
export interface RunInfo {
  mode: ModeName;
  seed: number;
  startedAt: string;
  totalMs: number;
  machine: string;
  pgUrl: string;
}
