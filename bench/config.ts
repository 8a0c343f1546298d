// Paths, flags and sizes of the benchmark: where its parts live and how large each row's workload is.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SMOKE_ENV } from './smoke-env.js';

export { SMOKE_ENV };

/** A smoke run: every workload at a size that takes seconds, to check that each row runs, not to measure it. */
export const SMOKE = process.env[SMOKE_ENV] === '1';
/** A workload's size: `full` in a measured run, `smoke` in a smoke run. */
const sized = <T>(full: T, smoke: T): T => (SMOKE ? smoke : full);

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(BENCH_DIR, '..');
export const RESULTS_DIR = join(BENCH_DIR, 'results');
const CHILDREN_DIR = join(BENCH_DIR, 'children');
/** Entry points of the child processes, each run as `node --import tsx FILE` (TSX_FLAGS). */
export const CHILD = {
  baselineServer: join(CHILDREN_DIR, 'baseline-server.ts'),
  latencyClient: join(CHILDREN_DIR, 'latency-client.ts'),
  sqliteBaseline: join(CHILDREN_DIR, 'sqlite-baseline.ts'),
  pgBaseline: join(CHILDREN_DIR, 'pg-baseline.ts'),
  sdkPeer: join(CHILDREN_DIR, 'sdk-peer.ts'),
  pushServer: join(CHILDREN_DIR, 'push-server.ts'),
  scaleTasks: join(CHILDREN_DIR, 'scale-tasks.ts'),
  upstreamV1: join(CHILDREN_DIR, 'upstream-v1.ts'),
} as const;
/** Node flags that let a child process run a TypeScript entry point. */
export const TSX_FLAGS = ['--import', 'tsx'];
/** The tool module of `serve --tools` (plain JavaScript: `serve` imports it without a TypeScript loader). */
export const BENCH_TOOLS = join(BENCH_DIR, 'tools.mjs');
/** Node flags that preload the memory probe into a server (it answers SIGUSR2 with its memory after a full GC). */
export const MEM_PROBE_FLAGS = [
  '--expose-gc',
  '--import',
  pathToFileURL(join(BENCH_DIR, 'mem-probe.mjs')).href,
];
export const HOST = '127.0.0.1';
/** The environment variable that hands the SDK peer the tools to list (JSON, bench/harness/demo-tools.ts). */
export const PEER_TOOLS_ENV = 'DURABLE_MCP_BENCH_PEER_TOOLS';
export const PROTOCOL_VERSION = '2026-07-28';
export const START_TIMEOUT_MS = 20_000;
/**
 * A section's time bound (bench/harness/section.ts): this long to fill its stores and start its servers, and per run
 * of a row this many seconds beyond its duration (a creation run's drain alone may take DRAIN_TIMEOUT_MS).
 */
export const SECTION_SETUP_MS = sized(900_000, 120_000);
export const ROW_RUN_SLACK_S = sized(90, 10);
export const STOP_TIMEOUT_MS = 5_000;
/** How long the worker may take to finish the tasks a creation run left queued before the harness gives up. */
export const DRAIN_TIMEOUT_MS = 60_000;
/** Tasks created before the tasks/get row, and how many of them one autocannon run rotates through. */
export const POLL_TASKS = sized(1_000, 40);
export const POLL_ROTATION = 20;
/** Push latency: SSE streams open during a run, each watching every task of one of PUSH_GROUPS groups. */
export const PUSH_STREAMS = sized(100, 10);
export const PUSH_GROUPS = sized(10, 5);
/**
 * Tasks answered (one at a time) per second of run duration; at least one per group. A transition's 10 events
 * arrive together, so the push p99 rests on the slowest 1% of transitions: 300 per default round (3,000 timed
 * transitions per row) keep it from resting on a handful, as 60 per round did (its ratio to the poller's p99
 * ranged 0.44–1.37 over repeated runs on a shared 2-core machine; 0.45–0.65 with 300).
 */
export const PUSH_STEPS_PER_SECOND = 100;
/** How long a push stream may take to show an expected event before the run fails. */
export const PUSH_TIMEOUT_MS = 10_000;
/** input_required tasks the sequential tasks/get row rotates through, and its longest run (seconds). */
export const GET_TASKS = sized(20, 5);
export const GET_MAX_SECONDS = 0.5;
/** Tasks created before each PostgreSQL tasks/get row (no worker, so no cap matters): POLL_ROTATION per run. */
export const PG_POLL_TASKS = sized(200, 40);
/** PostgreSQL: connections of the raw baseline (the default pool size of our store), replicas, probe timeout. */
export const PG_CONNECTIONS = 10;
export const PG_REPLICAS = sized(3, 2);
export const PG_PROBE_TIMEOUT_MS = 3_000;
/** Stored-task scale rows: tasks in the small and the large store, and the task ids sampled from each for tasks/get. */
export const SCALE_SMALL = sized(1_000, 100);
export const SCALE_LARGE = sized(1_000_000, 1_000);
export const SCALE_SAMPLE = sized(5_000, 50);
/**
 * Tools the completed tasks of the stored-task stores (SQLite and PostgreSQL) are spread over, in turn: the operator
 * list rows ask for one tool's newest page, so each filter matches a tenth of the store.
 */
export const SCALE_TOOLS: readonly string[] = Array.from({ length: 10 }, (_, k) =>
  k === 0 ? 'bench_task' : `bench_task_${k}`,
);
/** Tasks per page of the operator list rows (GET /admin/api/v1/tasks?tool=…&limit=…). */
export const ADMIN_PAGE = sized(50, 5);
/** Connections of each PostgreSQL operator-list server (one sequential client needs one). */
export const PG_SCALE_POOL = 2;
/** Longest sequential tasks/get run of the scale rows (seconds), and how long filling one store may take. */
export const SCALE_GET_MAX_SECONDS = 1;
export const SCALE_FILL_TIMEOUT_MS = 600_000;
/** Memory rows: streams held open at once, and the input_required tasks every subscription watches. */
export const MEM_STREAMS = sized(1_000, 20);
export const MEM_TASKS = sized(10, 3);
/** How long a memory probe or the server's closing of the streams may take. */
export const MEM_TIMEOUT_MS = 10_000;
/** Tasks left waiting for input before the creation row that measures creation next to them. */
export const WAITING_TASKS = sized(10_000, 50);
/** Tasks left in retry backoff (a failed step, the next attempt an hour away) before the row that creates next to them. */
export const RETRYING_TASKS = sized(10_000, 50);
/** Tasks left waiting for an event from outside (ctx.waitForEvent) before the row that creates next to them. */
export const EVENT_TASKS = sized(10_000, 50);
/**
 * Tasks queued behind a saturated concurrency key (limit 1, its slot held by a run that lasts the whole benchmark)
 * before the row that creates tasks of another tool next to them.
 */
export const SATURATED_TASKS = sized(10_000, 50);
/**
 * Sleeping-task rows: sleeping tasks in the small and the large store (cloned from one that our server put to sleep,
 * like the stored-task rows), and how far ahead they sleep (beyond any run; the TTL of bench_sleep is a day).
 */
export const SLEEP_SMALL = sized(100, 10);
export const SLEEP_LARGE = sized(100_000, 100);
export const SLEEP_FAR_MS = 6 * 3_600_000;
/**
 * Wake-up lateness: sample tasks per second of run (100 per default round, 500 per row), each sleeping until its own
 * time in the run's window, which opens WAKE_LEAD_MS after the run starts (time to create them and let each start
 * its sleep); how long after the window their results may take.
 */
export const WAKES_PER_SECOND = 100 / 3;
export const WAKE_LEAD_MS = sized(1_000, 500);
export const WAKE_TIMEOUT_MS = 10_000;
/** The sleeping-task memory row's target: RSS growth with SLEEP_LARGE sleeping tasks at most this × with SLEEP_SMALL. */
export const SLEEP_MEMORY_MAX_RATIO = 1.2;
/** Targets of the keyed and retry-backoff creation rows: at least this × the same creation without keys or waits. */
export const CREATION_MIN_RATIO = 0.9;
/** Creation next to tasks queued behind a saturated key: at least this × the same creation without them. */
export const SATURATED_MIN_RATIO = 0.85;
/** Creation next to tasks waiting for events: at least this × the same creation without them. */
export const EVENTS_MIN_RATIO = 0.85;
/** The gateway's synchronous tools/call: at least this × the same calls sent to its upstream's own endpoint. */
export const GATEWAY_SYNC_MIN_RATIO = 0.5;
/** Task creation through the gateway: at most this × the server CPU per task of serve's own task creation. */
export const GATEWAY_CPU_MAX_RATIO = 1.2;
/** Our servers in the push and PostgreSQL rows: no audit lines, no per-principal limits (one anonymous client). */
export const UNLIMITED = [
  '--no-audit',
  '--tasks-get-rate',
  '0',
  '--max-active-tasks',
  '0',
  '--max-stored-tasks',
  '0',
];

/** The stored-task and sleeping-task files (filled before the servers start), and their sizes. */
export type StoreSize = 'small' | 'large';
export const SCALE_FILES: Record<StoreSize, string> = { small: 'scale-small.db', large: 'scale-large.db' };
export const SLEEP_FILES: Record<StoreSize, string> = { small: 'sleep-small.db', large: 'sleep-large.db' };
export const SLEEP_COUNTS: Record<StoreSize, number> = { small: SLEEP_SMALL, large: SLEEP_LARGE };
