// Benchmark harness: interleaved rounds of `durable-mcp serve` (autocannon) next to baselines measured in the same
// run: a bare node:http JSON-RPC echo, the official TypeScript SDK v2 server as a peer (bench/sdk-peer.mjs), raw
// better-sqlite3 inserts and selects (bench/sqlite-baseline.mjs), the tasks/get round trip that push latency is
// compared with, raw `pg` inserts and selects (bench/pg-baseline.mjs) for the PostgreSQL rows, and the scale rows:
// tasks/get with 1k vs 1M stored tasks (bench/scale-tasks.mjs), memory per open subscription (bench/mem-probe.mjs),
// task creation with 10k tasks waiting for input or in retry backoff, and a server holding 100k sleeping tasks (its
// memory, and how late sleeping tasks wake up). Creation with an idempotency key runs next to creation without one.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { Agent, createServer, request as httpRequest } from 'node:http';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import pg from 'pg';
// Keys as the client library makes them (`npm run bench` builds dist/ first).
import { newIdempotencyKey } from '../dist/src/client/idempotency-key.js';

const SELF = fileURLToPath(import.meta.url);
const BENCH_DIR = dirname(SELF);
const ROOT = resolve(BENCH_DIR, '..');
const RESULTS_DIR = join(BENCH_DIR, 'results');
const SQLITE_BASELINE = join(BENCH_DIR, 'sqlite-baseline.mjs');
const PG_BASELINE = join(BENCH_DIR, 'pg-baseline.mjs');
const BENCH_TOOLS = join(BENCH_DIR, 'tools.mjs');
const SDK_PEER = join(BENCH_DIR, 'sdk-peer.mjs');
const SCALE_TASKS = join(BENCH_DIR, 'scale-tasks.mjs');
/** Node flags that preload the memory probe into a server (it answers SIGUSR2 with its memory after a full GC). */
const MEM_PROBE_FLAGS = ['--expose-gc', '--import', pathToFileURL(join(BENCH_DIR, 'mem-probe.mjs')).href];
const HOST = '127.0.0.1';
const PROTOCOL_VERSION = '2026-07-28';
const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;
/** How long the worker may take to finish the tasks a creation run left queued before the harness gives up. */
const DRAIN_TIMEOUT_MS = 60_000;
/** Tasks created before the tasks/get row, and how many of them one autocannon run rotates through. */
const POLL_TASKS = 1_000;
const POLL_ROTATION = 20;
/** Push latency: SSE streams open during a run, each watching every task of one of PUSH_GROUPS groups. */
const PUSH_STREAMS = 100;
const PUSH_GROUPS = 10;
/**
 * The push rows' target: p99 below one tasks/get round trip at PUSH_STREAMS subscribers, that is below the p99
 * round trip of a client polling the same server during the same rounds (pollDuringSteps).
 */
const PUSH_TARGET = {
  text: `p99 below one tasks/get round trip at ${PUSH_STREAMS} subscribers (p99 ÷ p99 of the poller in the same rounds)`,
  p99Ratio: 1,
  vs: 'poll',
};
/**
 * The wake-up lateness rows' target: a sleeping task resumes within one poll interval of its wake time (p99 ÷ the
 * pollIntervalMs the server advertised for the sample tasks, below 1): a client polling at that interval sees it
 * working again no later than it would see any other change.
 */
const WAKE_TARGET = {
  text: "p99 below one poll interval (p99 ÷ the sample tasks' advertised pollIntervalMs)",
  p99Ratio: 1,
  vs: 'interval',
};
/**
 * Tasks answered (one at a time) per second of run duration; at least one per group. A transition's 10 events
 * arrive together, so the push p99 rests on the slowest 1% of transitions: 300 per default round (3,000 timed
 * transitions per row) keep it from resting on a handful, as 60 per round did (its ratio to the poller's p99
 * ranged 0.44–1.37 over repeated runs on a shared 2-core machine; 0.45–0.65 with 300).
 */
const PUSH_STEPS_PER_SECOND = 100;
/** How long a push stream may take to show an expected event before the run fails. */
const PUSH_TIMEOUT_MS = 10_000;
/** input_required tasks the sequential tasks/get row rotates through, and its longest run (seconds). */
const GET_TASKS = 20;
const GET_MAX_SECONDS = 0.5;
/** Tasks created before each PostgreSQL tasks/get row (no worker, so no cap matters): POLL_ROTATION per run. */
const PG_POLL_TASKS = 200;
/** PostgreSQL: default database, and connections of the raw baseline (the default pool size of our store). */
const DEFAULT_PG_URL = process.env.DURABLE_MCP_BENCH_PG ?? 'postgres://postgres@127.0.0.1:5432/test';
const PG_CONNECTIONS = 10;
const PG_REPLICAS = 3;
const PG_PROBE_TIMEOUT_MS = 3_000;
/** Stored-task scale rows: tasks in the small and the large store, and the task ids sampled from each for tasks/get. */
const SCALE_SMALL = 1_000;
const SCALE_LARGE = 1_000_000;
const SCALE_SAMPLE = 5_000;
/** Longest sequential tasks/get run of the scale rows (seconds), and how long filling one store may take. */
const SCALE_GET_MAX_SECONDS = 1;
const SCALE_FILL_TIMEOUT_MS = 600_000;
/** Memory rows: streams held open at once, and the input_required tasks every subscription watches. */
const MEM_STREAMS = 1_000;
const MEM_TASKS = 10;
/** How long a memory probe or the server's closing of the streams may take. */
const MEM_TIMEOUT_MS = 10_000;
/** Tasks left waiting for input before the creation row that measures creation next to them. */
const WAITING_TASKS = 10_000;
/** Tasks left in retry backoff (a failed step, the next attempt an hour away) before the row that creates next to them. */
const RETRYING_TASKS = 10_000;
/**
 * Sleeping-task rows: sleeping tasks in the small and the large store (cloned from one that our server put to sleep,
 * like the stored-task rows), and how far ahead they sleep (beyond any run; the TTL of bench_sleep is a day).
 */
const SLEEP_SMALL = 100;
const SLEEP_LARGE = 100_000;
const SLEEP_FAR_MS = 6 * 3_600_000;
/**
 * Wake-up lateness: sample tasks per second of run (100 per default round, 500 per row), each sleeping until its own
 * time in the run's window, which opens WAKE_LEAD_MS after the run starts (time to create them and let each start
 * its sleep); how long after the window their results may take.
 */
const WAKES_PER_SECOND = 100 / 3;
const WAKE_LEAD_MS = 1_000;
const WAKE_TIMEOUT_MS = 10_000;
/** The sleeping-task memory row's target: RSS growth with SLEEP_LARGE sleeping tasks at most this × with SLEEP_SMALL. */
const SLEEP_MEMORY_MAX_RATIO = 1.2;
/** Our servers in the push and PostgreSQL rows: no audit lines, no per-principal limits (one anonymous client). */
const UNLIMITED = ['--no-audit', '--tasks-get-rate', '0', '--max-active-tasks', '0'];

const PRESETS = {
  default: { duration: 3, rounds: 5, warmup: 2, connections: 50, pipelining: 1 },
  quick: { duration: 1, rounds: 3, warmup: 1, connections: 50, pipelining: 1 },
};

const USAGE = `usage: npm run bench -- [flags]
  --quick              smoke run (~2.5 min): ${describePreset(PRESETS.quick)}
  --duration SEC       seconds per measured run (default ${PRESETS.default.duration})
  --rounds N           interleaved rounds per scenario (default ${PRESETS.default.rounds})
  --warmup SEC         discarded warm-up run per scenario before the rounds (default ${PRESETS.default.warmup}; 0 skips)
  --connections N      concurrent keep-alive connections (default ${PRESETS.default.connections})
  --pipelining N       requests in flight per connection (default ${PRESETS.default.pipelining})
  --pg URL             PostgreSQL for the pg rows (default ${DEFAULT_PG_URL}; env DURABLE_MCP_BENCH_PG)
  --no-pg              skip the PostgreSQL rows
  --no-scale           skip the ${fmtCount(SCALE_SMALL)} vs ${fmtCount(SCALE_LARGE)} stored-task rows (and filling their stores)
  --only REGEX         only the rows whose name matches (case-insensitive), with the rows they are compared with
  --cpu-prof DIR       run our servers under node --cpu-prof, writing DIR/<server>.cpuprofile
  --help               this text`;

function describePreset(p) {
  return `${p.rounds} rounds × ${p.duration} s, ${p.warmup} s warm-up, ${p.connections} connections`;
}

// ---------------------------------------------------------------------------------------------------------
// Servers under test. Each runs in its own child process. An HTTP server prints
// `listening on http://127.0.0.1:PORT/…`; an `ipc` child sends `{ type: 'ready' }` and then answers
// `{ op, seconds }` messages with measurements (see bench/sqlite-baseline.mjs).

/** `durable-mcp serve` on a SQLite file in the run's temp dir; `key` names its CPU profile. */
function serveCommand(ctx, key, store, args) {
  return serveStore(ctx, key, join(ctx.workDir, store), args);
}

/** `durable-mcp serve --store STORE` (a path or a postgres:// URL); `key` names its CPU profile. */
function serveStore(ctx, key, store, args) {
  return [
    ...(ctx.cpuProf
      ? ['--cpu-prof', '--cpu-prof-dir', ctx.cpuProf, '--cpu-prof-name', `${key}.cpuprofile`]
      : []),
    join(ROOT, 'bin', 'durable-mcp.js'),
    'serve',
    '--host',
    HOST,
    '--port',
    '0',
    '--store',
    store,
    ...args,
  ];
}

/** `node bench/push-server.mjs ARGS…`; `key` names its CPU profile. */
function pushServerCommand(ctx, key, args) {
  return [
    ...(ctx.cpuProf
      ? ['--cpu-prof', '--cpu-prof-dir', ctx.cpuProf, '--cpu-prof-name', `${key}.cpuprofile`]
      : []),
    join(ROOT, 'bench', 'push-server.mjs'),
    ...args,
  ];
}

/** A PostgreSQL replica: its own schema per row, no worker (the rows measure creation and reads). */
function servePg(ctx, name, schema) {
  return serveStore(ctx, name, ctx.pg.url, [
    '--pg-schema',
    schema,
    '--tools',
    BENCH_TOOLS,
    '--concurrency',
    '0',
    ...UNLIMITED,
  ]);
}

/** Environment of a server whose memory the harness probes (see bench/mem-probe.mjs). */
const memProbeEnv = (ctx, name) => ({
  DURABLE_MCP_BENCH_MEM_PROBE: join(ctx.workDir, `${name}.memory.json`),
});

/** A server on one of the stored-task scale files (filled before the servers start). */
function serveScale(ctx, key, size) {
  return serveCommand(ctx, key, SCALE_FILES[size], ['--tools', BENCH_TOOLS, ...UNLIMITED]);
}

const SCALE_FILES = { small: 'scale-small.db', large: 'scale-large.db' };

/** The sleeping-task stores, filled before the servers start (prepareSleepers). */
const SLEEP_FILES = { small: 'sleep-small.db', large: 'sleep-large.db' };
const SLEEP_COUNTS = { small: SLEEP_SMALL, large: SLEEP_LARGE };

/**
 * A server on one of the sleeping-task files, under the memory probe, with its worker (the default one: it must wake
 * the sample tasks of the lateness rows). One principal owns every sleeping task: the per-principal cap is off.
 */
function serveSleepers(size) {
  return {
    label:
      `node --expose-gc --import bench/mem-probe.mjs bin/durable-mcp.js serve --tools bench/tools.mjs --no-audit ` +
      `--tasks-get-rate 0 --max-active-tasks 0 (default worker; own SQLite file holding ` +
      `${fmtInt(SLEEP_COUNTS[size])} sleeping bench_sleep tasks, bench/scale-tasks.mjs)`,
    store: SLEEP_FILES[size],
    sleepers: size,
    command: (ctx, name) => [
      ...MEM_PROBE_FLAGS,
      ...serveCommand(ctx, name, SLEEP_FILES[size], ['--tools', BENCH_TOOLS, ...UNLIMITED]),
    ],
    env: memProbeEnv,
  };
}

const SERVERS = {
  baseline: {
    label: 'bare node:http: read body, JSON.parse, JSON-RPC reply echoing the id',
    command: () => [SELF, '--serve-baseline'],
  },
  peer: {
    label:
      'official TypeScript SDK v2 (@modelcontextprotocol/server + @modelcontextprotocol/node): createMcpHandler ' +
      "with a per-request McpServer (legacy: 'reject'), toNodeHandler on node:http, the demo tool list (bench/sdk-peer.mjs)",
    command: () => [SDK_PEER],
  },
  'baseline-stream': {
    label:
      'bare node:http holding each POST open as an SSE stream (one notifications/tasks event per requested taskId), ' +
      'under the memory probe',
    command: () => [...MEM_PROBE_FLAGS, SELF, '--serve-baseline', '--streams'],
    env: memProbeEnv,
  },
  sqlite: {
    label: 'raw better-sqlite3 in a child process: WAL, synchronous=FULL, a task-shaped table in a temp file',
    ipc: true,
    command: (ctx) => [SQLITE_BASELINE, '--serve-sqlite-baseline', join(ctx.workDir, 'raw.db')],
  },
  ours: {
    label: 'node bin/durable-mcp.js serve --tools demo (SQLite store in a temp dir)',
    command: (ctx) => serveCommand(ctx, 'ours', 'tasks.db', ['--tools', 'demo']),
  },
  'ours-tasks': {
    label:
      'node bin/durable-mcp.js serve --tools bench/tools.mjs --max-active-tasks 0 (default worker concurrency 8; own SQLite file)',
    store: 'bench-tasks.db',
    // One anonymous principal creates faster than the worker drains: the per-principal cap would answer 429.
    command: (ctx) =>
      serveCommand(ctx, 'ours-tasks', 'bench-tasks.db', ['--tools', BENCH_TOOLS, '--max-active-tasks', '0']),
  },
  // The benchmark is one anonymous principal: the per-principal tasks/get limit (default 20/s) would answer
  // almost every poll with 429, so it is set far above any reachable rate (the limiter still runs). The
  // setup creates as many tasks as the default cap on unfinished tasks per principal, so the cap is off.
  'ours-poll': {
    label:
      'node bin/durable-mcp.js serve --tools bench/tools.mjs --tasks-get-rate 1000000 --max-active-tasks 0 ' +
      '(own SQLite file)',
    store: 'bench-poll.db',
    command: (ctx) =>
      serveCommand(ctx, 'ours-poll', 'bench-poll.db', [
        '--tools',
        BENCH_TOOLS,
        '--tasks-get-rate',
        '1000000',
        '--max-active-tasks',
        '0',
      ]),
  },

  // Its queue grows without bound by design, so the cap on unfinished tasks per principal is off.
  'ours-park': {
    label:
      'node bin/durable-mcp.js serve --tools bench/tools.mjs --concurrency 1 --max-active-tasks 0 (one ' +
      'parked task holds the only worker slot, so the worker runs nothing; own SQLite file)',
    store: 'bench-park.db',
    command: (ctx) =>
      serveCommand(ctx, 'ours-park', 'bench-park.db', [
        '--tools',
        BENCH_TOOLS,
        '--concurrency',
        '1',
        '--max-active-tasks',
        '0',
      ]),
  },
  // Push latency and its tasks/get baseline: the runtime embedded through the public API (the same store,
  // extension, worker and HTTP handler as serve, default worker), plus a commit clock: bench/push-server.mjs
  // records the monotonic time of each timed transition's commit, read by the first listener of the change feed.
  'ours-push': {
    label:
      'node bench/push-server.mjs (createDurableMcp + createHttpHandler over bench/tools.mjs, default worker, ' +
      'no get rate limit; own SQLite file; GET /bench/commits serves commit times)',
    command: (ctx, name) => pushServerCommand(ctx, name, [join(ctx.workDir, 'bench-push.db')]),
  },
  // Memory per subscription: the default worker runs the watched bench_input tasks up to their input.
  'ours-subs': {
    label:
      'node --expose-gc --import bench/mem-probe.mjs bin/durable-mcp.js serve --tools bench/tools.mjs --no-audit ' +
      '--tasks-get-rate 0 --max-active-tasks 0 (own SQLite file)',
    command: (ctx) => [
      ...MEM_PROBE_FLAGS,
      ...serveCommand(ctx, 'ours-subs', 'bench-subs.db', ['--tools', BENCH_TOOLS, ...UNLIMITED]),
    ],
    env: memProbeEnv,
  },
  // Creation next to WAITING_TASKS tasks that wait for input: the flags of ours-tasks (the row it is compared with).
  'ours-wait': {
    label:
      'node bin/durable-mcp.js serve --tools bench/tools.mjs --max-active-tasks 0 (default worker; own SQLite ' +
      `file with ${fmtInt(WAITING_TASKS)} bench_input tasks waiting for input)`,
    store: 'bench-wait.db',
    command: (ctx) =>
      serveCommand(ctx, 'ours-wait', 'bench-wait.db', ['--tools', BENCH_TOOLS, '--max-active-tasks', '0']),
  },
  // Creation next to RETRYING_TASKS tasks in retry backoff: the flags of ours-tasks (the row it is compared with).
  'ours-retry': {
    label:
      'node bin/durable-mcp.js serve --tools bench/tools.mjs --max-active-tasks 0 (default worker; own SQLite ' +
      `file with ${fmtInt(RETRYING_TASKS)} bench_retry tasks waiting to retry a failed step)`,
    store: 'bench-retry.db',
    command: (ctx) =>
      serveCommand(ctx, 'ours-retry', 'bench-retry.db', ['--tools', BENCH_TOOLS, '--max-active-tasks', '0']),
  },
  'ours-sleep-small': serveSleepers('small'),
  'ours-sleep-large': serveSleepers('large'),
  'ours-small': {
    label: `the same on a SQLite file holding ${fmtInt(SCALE_SMALL)} completed tasks (bench/scale-tasks.mjs)`,
    scale: 'small',
    command: (ctx) => serveScale(ctx, 'ours-small', 'small'),
  },
  'ours-large': {
    label: `the same on a SQLite file holding ${fmtInt(SCALE_LARGE)} completed tasks (bench/scale-tasks.mjs)`,
    scale: 'large',
    command: (ctx) => serveScale(ctx, 'ours-large', 'large'),
  },
  'pg-raw': {
    label: `raw pg (node-postgres) in a child process: ${PG_CONNECTIONS} connections, named statements, a task-shaped table in its own schema`,
    ipc: true,
    pg: true,
    command: (ctx) => [
      PG_BASELINE,
      '--serve-pg-baseline',
      ctx.pg.url,
      ctx.pg.schemas['pg-raw'],
      String(PG_CONNECTIONS),
    ],
  },
  'ours-pg1': {
    label:
      'node bin/durable-mcp.js serve --store postgres://… --pg-schema <fresh> --tools bench/tools.mjs --concurrency 0 ' +
      '--no-audit --tasks-get-rate 0 --max-active-tasks 0 (one process)',
    pg: true,
    command: (ctx, name) => servePg(ctx, name, ctx.pg.schemas['ours-pg1']),
  },
  // Push latency on PostgreSQL: the push server on a fresh schema, 1 process or PG_REPLICAS processes (replicas: a
  // change committed on one reaches the subscribers of another through LISTEN/NOTIFY).
  'ours-pg-push1': {
    label: 'node bench/push-server.mjs postgres://… <fresh schema> (one process, default worker)',
    pg: true,
    command: (ctx, name) => pushServerCommand(ctx, name, [ctx.pg.url, ctx.pg.schemas['ours-pg-push1']]),
  },
  'ours-pg-push3': {
    label: `the same, ${PG_REPLICAS} processes on one fresh schema; streams and answers spread over them round-robin`,
    pg: true,
    replicas: PG_REPLICAS,
    command: (ctx, name) => pushServerCommand(ctx, name, [ctx.pg.url, ctx.pg.schemas['ours-pg-push3']]),
  },
  'ours-pg3': {
    label: `the same, ${PG_REPLICAS} processes on one fresh schema; the load is spread over them round-robin`,
    pg: true,
    replicas: PG_REPLICAS,
    command: (ctx, name) => servePg(ctx, name, ctx.pg.schemas['ours-pg3']),
  },
};

// ---------------------------------------------------------------------------------------------------------
// Scenarios, measured in this order in every round. To add one, append an object:
//   name      unique row label
//   server    key of SERVERS it talks to
//   baseline  name of the scenario its ratio is computed against (null for a baseline row)
//   setup     optional async (target) => state, run once after the servers start (e.g. create tasks)
//   request   (target, state) => autocannon request options: { method, path, headers, body, requests? }
//   run       instead of request: async (target, state, seconds) => sample, for non-HTTP measurements
//   verify    optional (status, text, target) => error string | undefined (may be async); defaults to
//             expectJsonRpcResult
//   settle    optional async (target) => fields merged into the sample, run after every measured run (e.g.
//             wait until the worker has finished the tasks the run created)
//   kind      'latency' for rows of the latency table (their `run` returns per-event `latencies` in ms; the ratio
//             is p50 ÷ p50 and p99 ÷ p99 of the baseline row); default: a throughput row
//   target    latency rows: the stated target, { text, p99Ratio?, p50Ratio? } (met when p99 ÷ baseline p99 is below
//             p99Ratio and p50 ÷ baseline p50 at most p50Ratio)
//   also      optional names of further rows this row's ratio is also computed against (e.g. the peer's row)
//   targets   optional throughput targets, [{ vs, min }]: met when median ops/s ÷ the named row's is at least min
//   needs     'pg' for rows that need PostgreSQL (skipped, with the reason printed, when it is unreachable);
//             'scale' for the stored-task rows (skipped with --no-scale)
//   kind      also 'memory': rows of the memory table; `run` returns `bytesPerStream` (and `rssPerStream`), the
//             ratio is bytes ÷ the baseline row's bytes

const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

const META = {
  'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
};

const TASKS_META = {
  ...META,
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
};

function mcpRequest(method, params = {}, name, meta = META) {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': PROTOCOL_VERSION,
    'mcp-method': method,
  };
  if (name !== undefined) headers['mcp-name'] = name;
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } });
  return { method: 'POST', path: '/mcp', headers, body };
}

const callEcho = () => mcpRequest('tools/call', { name: 'echo', arguments: { text: 'hi' } }, 'echo');
const createTask = (tool) => mcpRequest('tools/call', { name: tool, arguments: {} }, tool, TASKS_META);
const getTask = (taskId) => mcpRequest('tasks/get', { taskId }, taskId, TASKS_META);

const IDEMPOTENCY_KEY = 'dev.durable-mcp/idempotencyKey';
/** The key the pre-flight checks send (and send again). */
const PREFLIGHT_KEY = 'bench-preflight-key';
/**
 * The creation row's request with an idempotency key, a fresh one in every request autocannon sends (its
 * `setupRequest` rebuilds the body around the key), made by `newKey`: by default as `durable-mcp/client` makes
 * them (UUIDv7, time-ordered); `randomUUID` for keys in no order. Sent as it is (the pre-flight check), the key is
 * PREFLIGHT_KEY.
 */
const createKeyedTask = (tool, args = {}, newKey = newIdempotencyKey, metaKey = IDEMPOTENCY_KEY) => {
  const req = mcpRequest('tools/call', { name: tool, arguments: args }, tool, {
    ...TASKS_META,
    [metaKey]: PREFLIGHT_KEY,
  });
  const [head, tail] = req.body.split(JSON.stringify(PREFLIGHT_KEY));
  const setupRequest = (r) => ({ ...r, body: `${head}${JSON.stringify(newKey())}${tail}` });
  return { ...req, requests: [{ setupRequest }] };
};
/** tools/call of bench_sleep: a task that sleeps until `until` (epoch ms). */
const createSleepTask = (until) =>
  mcpRequest('tools/call', { name: 'bench_sleep', arguments: { until } }, 'bench_sleep', TASKS_META);

// bench_input asks for an elicitation, which needs the client capability.
const INPUT_META = {
  ...META,
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, extensions: { [TASKS_EXTENSION]: {} } },
};
const createInputTask = () =>
  mcpRequest('tools/call', { name: 'bench_input', arguments: {} }, 'bench_input', INPUT_META);
const answerTask = (taskId) =>
  mcpRequest(
    'tasks/update',
    { taskId, inputResponses: { go: { action: 'accept', content: {} } } },
    taskId,
    INPUT_META,
  );
const listenTasks = (taskIds, id) => ({
  ...mcpRequest('subscriptions/listen', { notifications: { taskIds } }, undefined, INPUT_META),
  body: JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'subscriptions/listen',
    params: { notifications: { taskIds }, _meta: INPUT_META },
  }),
});

const PEER_LIST = 'peer SDK v2 tools/list';
const PEER_CALL = 'peer SDK v2 tools/call echo';
const ECHO = 'baseline echo';
const CREATION = 'ours task creation over HTTP';
const SCALE_SMALL_ROW = `ours tasks/get, ${fmtCount(SCALE_SMALL)} stored tasks (sequential)`;
const MEM_BASE_ROW = 'bare node:http open SSE stream';
/** Ours ≥ 5 × the peer's requests/s and ≥ 0.5 × the bare echo's (the rows that read and answer at once). */
const READ_TARGETS = [
  { vs: ECHO, min: 0.5 },
  { vs: PEER_LIST, min: 5 },
];
const RAW_INSERT = 'raw better-sqlite3 insert (FULL sync)';
const GET_RTT = 'ours tasks/get round trip (sequential)';
const PG_GET_RTT = 'ours pg tasks/get round trip (sequential), 1 replica';
const RAW_PG_INSERT = `raw pg insert (autocommit, ${PG_CONNECTIONS} connections)`;
const RAW_PG_SELECT = `raw pg point select (${PG_CONNECTIONS} connections)`;
const PG_CREATION = 'ours pg task creation, 1 replica';
/**
 * The controls of the keyed rows: the same requests, rebuilt for each request around a fresh value of the same
 * size, under a `_meta` key the server ignores. Rebuilding a request costs the load generator (on the same two
 * cores as the server) some 10 µs; the control pays it too, so the keyed row's ratio to it is what the key costs.
 */
const REBUILT = 'ours task creation, each request rebuilt (no key)';
const PG_REBUILT = 'ours pg task creation, each request rebuilt (no key), 1 replica';
/** The `_meta` key of the controls' padding (a prefix of no one's: servers ignore keys they do not know). */
const PAD_KEY = 'bench.durable-mcp/pad';
const WAKE_SMALL_ROW = `ours wake-up lateness, ${fmtCount(SLEEP_SMALL)} sleeping tasks`;
const SLEEP_MEMORY_SMALL_ROW = `ours server memory, ${fmtCount(SLEEP_SMALL)} sleeping tasks`;
/** Targets of the keyed and retry-backoff creation rows: at least this × the same creation without keys or waits. */
const CREATION_MIN_RATIO = 0.9;

const SCENARIOS = [
  // The baseline receives byte-for-byte the same request as `ours tools/call echo`.
  { name: ECHO, server: 'baseline', baseline: null, request: callEcho },
  // The peer receives byte-for-byte the same requests as ours; the pre-flight checks that both answer alike.
  {
    name: PEER_LIST,
    server: 'peer',
    baseline: ECHO,
    request: () => mcpRequest('tools/list'),
    verify: verifyToolList,
  },
  { name: PEER_CALL, server: 'peer', baseline: ECHO, request: callEcho, verify: verifyEchoResult },
  {
    name: 'ours tools/list',
    server: 'ours',
    baseline: ECHO,
    also: [PEER_LIST],
    targets: READ_TARGETS,
    request: () => mcpRequest('tools/list'),
    verify: verifyToolList,
  },
  {
    name: 'ours tools/call echo',
    server: 'ours',
    baseline: ECHO,
    also: [PEER_CALL],
    request: callEcho,
    verify: verifyEchoResult,
  },
  // One row INSERT per autocommit transaction (one fsync each), back to back on one thread.
  { name: RAW_INSERT, server: 'sqlite', baseline: null, run: rawChild('insert') },
  // tools/call of a task-only tool: one durable task per request; the worker runs each (claim + finish).
  {
    name: CREATION,
    server: 'ours-tasks',
    baseline: RAW_INSERT,
    also: [PEER_CALL],
    request: () => createTask('bench_task'),
    verify: verifyTaskCreated,
    settle: drainWorker,
  },
  // The control of the keyed rows (REBUILT): the creation row's request rebuilt for each request, no key.
  {
    name: REBUILT,
    server: 'ours-tasks',
    baseline: RAW_INSERT,
    also: [CREATION, PEER_CALL],
    request: () => createKeyedTask('bench_task', {}, newIdempotencyKey, PAD_KEY),
    verify: verifyTaskCreated,
    settle: drainWorker,
  },
  // A fresh idempotency key in every request, made as the client library makes them (the creation checks it and
  // keeps it in a unique index); on the same server, right after its control in every round.
  {
    name: 'ours task creation with an idempotency key',
    server: 'ours-tasks',
    baseline: RAW_INSERT,
    also: [REBUILT, CREATION, PEER_CALL],
    targets: [{ vs: REBUILT, min: CREATION_MIN_RATIO }],
    request: () => createKeyedTask('bench_task'),
    verify: verifyKeyedTask,
    settle: drainWorker,
  },
  // The same with keys in no order (UUIDv4), as a caller that makes its own might send: each lands on another page
  // of the key index. For information (no target).
  {
    name: 'ours task creation with a random idempotency key',
    server: 'ours-tasks',
    baseline: RAW_INSERT,
    also: [REBUILT, PEER_CALL],
    request: () => createKeyedTask('bench_task', {}, randomUUID),
    verify: verifyKeyedTask,
    settle: drainWorker,
  },
  // The same creation path with the worker out of the way: what group-committed creation alone costs.
  {
    name: 'ours task creation, worker parked',
    server: 'ours-park',
    baseline: RAW_INSERT,
    also: [PEER_CALL],
    request: () => createTask('bench_park'),
    verify: verifyTaskCreated,
  },
  // The creation row again, on a store where WAITING_TASKS tasks wait for input (and stay so).
  {
    name: `ours task creation, ${fmtCount(WAITING_TASKS)} tasks waiting for input`,
    server: 'ours-wait',
    baseline: RAW_INSERT,
    also: [CREATION, PEER_CALL],
    setup: createWaitingTasks,
    request: () => createTask('bench_task'),
    verify: verifyTaskCreated,
    settle: drainWorker,
  },
  // The creation row again, on a store where RETRYING_TASKS tasks wait (wake_at an hour ahead) to retry a failed step.
  {
    name: `ours task creation, ${fmtCount(RETRYING_TASKS)} tasks in retry backoff`,
    server: 'ours-retry',
    baseline: RAW_INSERT,
    also: [CREATION, PEER_CALL],
    targets: [{ vs: CREATION, min: CREATION_MIN_RATIO }],
    setup: createRetryingTasks,
    request: () => createTask('bench_task'),
    verify: verifyTaskCreated,
    settle: drainWorker,
  },
  { name: 'raw better-sqlite3 point select', server: 'sqlite', baseline: null, run: rawChild('select') },
  // The peer has no tasks/get: its closest request, a synchronous tools/call answered at once, is the comparison.
  {
    name: 'ours tasks/get polling',
    server: 'ours-poll',
    baseline: ECHO,
    also: [PEER_CALL],
    targets: [READ_TARGETS[0], { vs: PEER_CALL, min: 5 }],
    setup: createPollTasks,
    request: pollTasks,
    verify: verifyPolledTask,
  },
  // Latency table. One poll of an unfinished task, one request at a time: what a client that polls pays per look.
  {
    name: GET_RTT,
    server: 'ours-push',
    baseline: null,
    kind: 'latency',
    setup: createGetTasks,
    run: sequentialGets,
  },
  // From the commit of a transition (server clock, bench/push-server.mjs) to the moment a subscriber reads its event.
  {
    name: `ours push latency, ${PUSH_STREAMS} SSE subscribers`,
    server: 'ours-push',
    baseline: GET_RTT,
    kind: 'latency',
    target: PUSH_TARGET,
    run: pushLatency,
  },
  // Scale: the same sequential tasks/get on a store of SCALE_SMALL and one of SCALE_LARGE completed tasks, each request
  // for another task sampled from the whole store.
  {
    name: SCALE_SMALL_ROW,
    server: 'ours-small',
    baseline: null,
    kind: 'latency',
    needs: 'scale',
    setup: scaleGetState,
    run: scaleGets,
  },
  {
    name: `ours tasks/get, ${fmtCount(SCALE_LARGE)} stored tasks (sequential)`,
    server: 'ours-large',
    baseline: SCALE_SMALL_ROW,
    kind: 'latency',
    needs: 'scale',
    target: { text: `p50 within 1.2 × ${fmtCount(SCALE_SMALL)} stored tasks (p50)`, p50Ratio: 1.2 },
    setup: scaleGetState,
    run: scaleGets,
  },
  // Memory per open stream: MEM_STREAMS streams at once, each watching the same MEM_TASKS tasks.
  {
    name: MEM_BASE_ROW,
    server: 'baseline-stream',
    baseline: null,
    kind: 'memory',
    setup: () => ({
      ids: Array.from({ length: MEM_TASKS }, () => `task_${randomBytes(24).toString('base64url')}`),
    }),
    run: memoryPerStream,
  },
  {
    name: `ours subscriptions/listen (${MEM_TASKS} taskIds)`,
    server: 'ours-subs',
    baseline: MEM_BASE_ROW,
    kind: 'memory',
    setup: createSubscriptionTasks,
    run: memoryPerStream,
  },
  // Sleeping tasks: how late sample tasks wake (from their wake time to their handler resuming) on a server whose
  // store holds SLEEP_SMALL and SLEEP_LARGE other sleeping tasks; then, in the same round, those servers' memory.
  {
    name: WAKE_SMALL_ROW,
    server: 'ours-sleep-small',
    baseline: null,
    kind: 'latency',
    target: WAKE_TARGET,
    run: wakeLateness,
  },
  {
    name: `ours wake-up lateness, ${fmtCount(SLEEP_LARGE)} sleeping tasks`,
    server: 'ours-sleep-large',
    baseline: WAKE_SMALL_ROW,
    kind: 'latency',
    target: WAKE_TARGET,
    run: wakeLateness,
  },
  {
    name: SLEEP_MEMORY_SMALL_ROW,
    server: 'ours-sleep-small',
    baseline: null,
    kind: 'footprint',
    run: serverFootprint,
  },
  {
    name: `ours server memory, ${fmtCount(SLEEP_LARGE)} sleeping tasks`,
    server: 'ours-sleep-large',
    baseline: SLEEP_MEMORY_SMALL_ROW,
    kind: 'footprint',
    target: {
      text: `RSS growth at most ${SLEEP_MEMORY_MAX_RATIO} × with ${fmtCount(SLEEP_SMALL)} sleeping tasks`,
      maxRatio: SLEEP_MEMORY_MAX_RATIO,
    },
    run: serverFootprint,
  },
  // PostgreSQL: each server (set) on its own fresh schema, dropped at the end.
  { name: RAW_PG_INSERT, server: 'pg-raw', baseline: null, needs: 'pg', run: rawChild('insert') },
  {
    name: PG_CREATION,
    server: 'ours-pg1',
    baseline: RAW_PG_INSERT,
    also: [PEER_CALL],
    needs: 'pg',
    request: () => createTask('bench_task'),
    verify: verifyTaskCreated,
  },
  {
    name: PG_REBUILT,
    server: 'ours-pg1',
    baseline: RAW_PG_INSERT,
    also: [PG_CREATION, PEER_CALL],
    needs: 'pg',
    request: () => createKeyedTask('bench_task', {}, newIdempotencyKey, PAD_KEY),
    verify: verifyTaskCreated,
  },
  {
    name: 'ours pg task creation with an idempotency key, 1 replica',
    server: 'ours-pg1',
    baseline: RAW_PG_INSERT,
    also: [PG_REBUILT, PG_CREATION, PEER_CALL],
    targets: [{ vs: PG_REBUILT, min: CREATION_MIN_RATIO }],
    needs: 'pg',
    request: () => createKeyedTask('bench_task'),
    verify: verifyKeyedTask,
  },
  {
    name: `ours pg task creation, ${PG_REPLICAS} replicas`,
    server: 'ours-pg3',
    baseline: RAW_PG_INSERT,
    also: [PEER_CALL],
    needs: 'pg',
    request: () => createTask('bench_task'),
    verify: verifyTaskCreated,
  },
  { name: RAW_PG_SELECT, server: 'pg-raw', baseline: null, needs: 'pg', run: rawChild('select') },
  {
    name: 'ours pg tasks/get, 1 replica',
    server: 'ours-pg1',
    baseline: RAW_PG_SELECT,
    also: [PEER_CALL],
    needs: 'pg',
    setup: createPgPollTasks,
    request: pollTasks,
    verify: verifyPolledPgTask,
  },
  {
    name: `ours pg tasks/get, ${PG_REPLICAS} replicas`,
    server: 'ours-pg3',
    baseline: RAW_PG_SELECT,
    also: [PEER_CALL],
    needs: 'pg',
    setup: createPgPollTasks,
    request: pollTasks,
    verify: verifyPolledPgTask,
  },
  // Latency on PostgreSQL: the same two measurements on the push server over PostgreSQL.
  {
    name: PG_GET_RTT,
    server: 'ours-pg-push1',
    baseline: null,
    kind: 'latency',
    needs: 'pg',
    setup: createGetTasks,
    run: sequentialGets,
  },
  {
    name: `ours pg push latency, ${PUSH_STREAMS} SSE subscribers, 1 replica`,
    server: 'ours-pg-push1',
    baseline: PG_GET_RTT,
    kind: 'latency',
    needs: 'pg',
    target: PUSH_TARGET,
    run: pushLatency,
  },
  {
    name: `ours pg push latency, ${PUSH_STREAMS} SSE subscribers, ${PG_REPLICAS} replicas`,
    server: 'ours-pg-push3',
    baseline: PG_GET_RTT,
    kind: 'latency',
    needs: 'pg',
    run: pushLatency,
  },
];

/** A measurement run by a raw baseline child (SQLite or pg): `op` back to back for `seconds`. */
function rawChild(op) {
  return async (target, _state, seconds) => {
    const m = await askChild(target, { op, seconds }, seconds * 1000 + 30_000);
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

/** tools/call answered with a task (resultType "task") that tasks/get then finds. */
async function verifyTaskCreated(status, text, target) {
  const problem = expectJsonRpcResult(status, text);
  if (problem !== undefined) return problem;
  const created = JSON.parse(text).result;
  if (created.resultType !== 'task' || typeof created.taskId !== 'string') {
    return `expected a CreateTaskResult (resultType "task" with a taskId): ${text.slice(0, 300)}`;
  }
  // Every replica (one for most servers) must find the task.
  for (const url of target.urls) {
    const got = await sendTo(url, getTask(created.taskId));
    const miss = expectJsonRpcResult(got.status, got.text);
    if (miss !== undefined) return `tasks/get ${created.taskId} on ${url}: ${miss}`;
    if (JSON.parse(got.text).result.taskId !== created.taskId)
      return `tasks/get answered another task: ${got.text}`;
  }
  return undefined;
}

/**
 * The keyed creation rows' pre-flight: the request creates a task (its key the literal `[<id>]`, see
 * createKeyedTask); sent again it answers the same task, and with other arguments under that key -32602.
 */
async function verifyKeyedTask(status, text, target) {
  const problem = await verifyTaskCreated(status, text, target);
  if (problem !== undefined) return problem;
  const { taskId } = JSON.parse(text).result;
  const again = await send(target, createKeyedTask('bench_task'));
  const miss = expectJsonRpcResult(again.status, again.text);
  if (miss !== undefined) return `the same key again: ${miss}`;
  if (JSON.parse(again.text).result.taskId !== taskId) {
    return `the same key again created another task: ${again.text.slice(0, 300)}`;
  }
  const other = await send(target, createKeyedTask('bench_task', { other: true }));
  if (JSON.parse(other.text).error?.code !== -32602) {
    return `the same key with other arguments: expected error -32602, got ${other.text.slice(0, 300)}`;
  }
  return undefined;
}

/** The tools of `serve --tools demo`, which the peer lists too, and the input schema of `echo`. */
const DEMO_TOOLS = ['add', 'echo', 'generate_report', 'greet_person', 'wait'];
const ECHO_SCHEMA = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };

/** tools/list answered with the demo tools (ours and the peer alike). */
function verifyToolList(status, text) {
  const problem = expectJsonRpcResult(status, text);
  if (problem !== undefined) return problem;
  const { tools } = JSON.parse(text).result;
  const names = Array.isArray(tools) ? tools.map((t) => t.name).sort() : [];
  if (names.join() !== DEMO_TOOLS.join()) {
    return `expected the tools ${DEMO_TOOLS.join(', ')}: ${text.slice(0, 300)}`;
  }
  const echo = tools.find((t) => t.name === 'echo');
  if (JSON.stringify(echo.inputSchema) !== JSON.stringify(ECHO_SCHEMA)) {
    return `echo's input schema differs: ${JSON.stringify(echo.inputSchema)}`;
  }
  return undefined;
}

/** tools/call of echo answered with exactly the echoed text (ours and the peer alike). */
function verifyEchoResult(status, text) {
  const problem = expectJsonRpcResult(status, text);
  if (problem !== undefined) return problem;
  const { content } = JSON.parse(text).result;
  const expected = [{ type: 'text', text: 'hi' }];
  if (JSON.stringify(content) !== JSON.stringify(expected)) {
    return `expected the content ${JSON.stringify(expected)}: ${text.slice(0, 300)}`;
  }
  return undefined;
}

/** Creates `count` tasks with `request`, `parallel` at a time, spread over the target's replicas; their ids. */
async function createTasks(target, request, count, parallel) {
  const ids = [];
  let next = 0;
  const createOne = async () => {
    while (next < count) {
      const url = target.urls[next++ % target.urls.length];
      const res = await sendTo(url, request());
      const problem = expectJsonRpcResult(res.status, res.text);
      if (problem !== undefined) throw new Error(`creating tasks on ${target.key}: ${problem}`);
      ids.push(JSON.parse(res.text).result.taskId);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, createOne));
  return ids;
}

/** Setup of the PostgreSQL polling rows: PG_POLL_TASKS tasks (no worker runs them: they stay `working`). */
async function createPgPollTasks(target) {
  return { ids: await createTasks(target, () => createTask('bench_task'), PG_POLL_TASKS, 50), runs: 0 };
}

function verifyPolledPgTask(status, text) {
  const problem = expectJsonRpcResult(status, text);
  if (problem !== undefined) return problem;
  const task = JSON.parse(text).result;
  if (task.status !== 'working' || typeof task.taskId !== 'string') {
    return `expected a working task: ${text.slice(0, 300)}`;
  }
  return undefined;
}

/** Setup of the polling row: POLL_TASKS tasks, created 50 at a time, all run to completion by the worker. */
async function createPollTasks(target) {
  const ids = [];
  let next = 0;
  const createOne = async () => {
    while (next++ < POLL_TASKS) {
      const res = await send(target, createTask('bench_task'));
      const problem = expectJsonRpcResult(res.status, res.text);
      if (problem !== undefined) throw new Error(`creating the tasks to poll: ${problem}`);
      ids.push(JSON.parse(res.text).result.taskId);
    }
  };
  await Promise.all(Array.from({ length: 50 }, createOne));
  await drainWorker(target);
  return { ids, runs: 0 };
}

/**
 * tasks/get of POLL_ROTATION tasks in turn (autocannon's `requests`), a different slice of the created tasks in
 * every run. autocannon builds each entry for every connection inside the measured time, so the slice is small.
 */
function pollTasks(_target, state) {
  const first = (state.runs++ * POLL_ROTATION) % state.ids.length;
  const requests = Array.from({ length: POLL_ROTATION }, (_, i) =>
    getTask(state.ids[(first + i) % state.ids.length]),
  );
  return { ...requests[0], requests };
}

function verifyPolledTask(status, text) {
  const problem = expectJsonRpcResult(status, text);
  if (problem !== undefined) return problem;
  const task = JSON.parse(text).result;
  if (task.status !== 'completed') return `expected a completed task: ${text.slice(0, 300)}`;
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Push latency and its tasks/get baseline (the latency table).

const nsToMs = (ns) => Number(ns) / 1e6;

/** The p-th percentile (0..1) of an ascending array, rounded to 0.001 ms. */
function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] * 1000) / 1000;
}

function latencySample(latencies, seconds, extra = {}) {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    rps: round1(latencies.length / seconds),
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    ok: latencies.length,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    seconds: Math.round(seconds * 1000) / 1000,
    ...extra,
    latencies,
  };
}

/** One POST over node:http (keep-alive `agent`), the client whose timing the latency rows use. */
function post(agent, url, req) {
  return new Promise((resolvePost, reject) => {
    const r = httpRequest(
      url,
      { method: 'POST', agent, headers: { ...req.headers, 'content-length': Buffer.byteLength(req.body) } },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () =>
          resolvePost({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    r.end(req.body);
  });
}

/** Polls tasks/get until every task is input_required (the worker ran bench_input up to its input). */
async function waitForInput(target, ids) {
  const started = performance.now();
  for (const id of ids) {
    for (;;) {
      const res = await send(target, getTask(id));
      const problem = expectJsonRpcResult(res.status, res.text);
      if (problem !== undefined) throw new Error(`tasks/get ${id}: ${problem}`);
      if (JSON.parse(res.text).result.status === 'input_required') break;
      if (performance.now() - started > PUSH_TIMEOUT_MS) {
        throw new Error(`${target.key}: task ${id} did not ask for input within ${PUSH_TIMEOUT_MS} ms`);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}

/** Setup of the tasks/get round-trip row: GET_TASKS bench_input tasks, left waiting for input for good. */
async function createGetTasks(target) {
  const ids = await createTasks(target, createInputTask, GET_TASKS, 10);
  await waitForInput(target, ids);
  return { ids };
}

/**
 * tasks/get of input_required tasks, one request at a time over one keep-alive connection, for `seconds` (at most
 * GET_MAX_SECONDS: that already gives thousands of samples per run).
 */
async function sequentialGets(target, state, runSeconds) {
  const requests = state.ids.map(getTask);
  return timeSequentialGets(
    target,
    Math.min(runSeconds, GET_MAX_SECONDS),
    (i) => requests[i % requests.length],
  );
}

/**
 * Sends the `i`-th request of `requestAt(i)` one at a time over one keep-alive connection for `seconds`, timing
 * each round trip; every answer must be HTTP 200.
 */
async function timeSequentialGets(target, seconds, requestAt) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies = [];
  try {
    const started = process.hrtime.bigint();
    const end = started + BigInt(Math.round(seconds * 1e9));
    let now = started;
    for (let i = 0; now < end; i++) {
      const res = await post(agent, target.url, requestAt(i));
      const after = process.hrtime.bigint();
      if (res.status !== 200) throw new Error(`tasks/get: HTTP ${res.status}: ${res.text.slice(0, 300)}`);
      latencies.push(nsToMs(after - now));
      now = after;
    }
    return latencySample(latencies, nsToMs(now - started) / 1000);
  } finally {
    agent.destroy();
  }
}

/** The push client's clock: CLOCK_MONOTONIC (the servers' too) as ns since this process started, in a double. */
const CLOCK_BASE = process.hrtime.bigint();
const clockNs = () => Number(process.hrtime.bigint() - CLOCK_BASE);
/** A server's CLOCK_MONOTONIC reading (decimal ns, as bench/push-server.mjs and bench/tools.mjs give it). */
const serverNs = (ns) => Number(BigInt(ns) - CLOCK_BASE);

/**
 * How long this process has waited for a core so far, in ms (Linux: the second field of /proc/self/schedstat,
 * its run-queue time); undefined where that file does not exist.
 */
function runQueueWaitMs() {
  try {
    return Number(readFileSync('/proc/self/schedstat', 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return undefined;
  }
}

/** The bytes that open the completed event of task `id` (DetailedTask starts with taskId, then status). */
const completedMarker = (id) => Buffer.from(`"taskId":${JSON.stringify(id)},"status":"completed"`);

/** Whether `buf` ends an SSE event (a blank line). */
const endsEvent = (buf) => buf.length >= 2 && buf[buf.length - 1] === 10 && buf[buf.length - 2] === 10;

/**
 * One subscriptions/listen stream over its own connection. It parses every event as it comes and keeps each task's
 * latest status (`status`, `until`) — until `record()`. From then on it only keeps the raw chunks with the clock
 * reading of their arrival, and looks for one byte pattern: the completed event `expect`ed. `recorded()` parses
 * what was kept, each event stamped with the arrival of the chunk that completed it, and goes back to parsing as
 * events come. So while events are being timed the client allocates next to nothing, and its own garbage
 * collections do not hold up the reads it times (parsing as they came, 100 streams' worth of events, had its
 * scavenges take up to 7 ms).
 */
function openTaskStream(url, taskIds, listenId) {
  const req = listenTasks(taskIds, listenId);
  return new Promise((resolveStream, reject) => {
    const status = new Map();
    const waiters = new Set();
    let failure;
    const decoder = new StringDecoder('utf8');
    let text = '';
    /** Parses the complete events in `text` (after appending `more`), calling `onEvent(msg)` for each. */
    const parseText = (more, onEvent) => {
      text += more;
      let end;
      while ((end = text.indexOf('\n\n')) !== -1) {
        const block = text.slice(0, end);
        text = text.slice(end + 2);
        const data = block
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trimStart())
          .join('\n');
        if (data === '') continue;
        const msg = JSON.parse(data);
        if (msg.method === 'notifications/tasks') status.set(msg.params.taskId, msg.params.status);
        onEvent?.(msg);
      }
    };
    const check = () => {
      for (const w of waiters) {
        if (failure !== undefined) w.reject(failure);
        else if (w.pred()) w.resolve();
        else continue;
        clearTimeout(w.timer);
        waiters.delete(w);
      }
    };
    // Recording: the chunks, their arrival (clockNs) and the completed event being waited for.
    let recording = false;
    let chunks = [];
    let arrivals = [];
    let expected;
    const settleExpected = (err) => {
      const e = expected;
      if (e === undefined) return;
      expected = undefined;
      clearTimeout(e.timer);
      if (err === undefined) e.resolve();
      else e.reject(err);
    };
    /** Whether the expected marker is in `chunk`, or split between the previous chunk and this one. */
    const found = (chunk) => {
      const { marker } = expected;
      if (chunk.includes(marker)) return true;
      const prev = chunks.length >= 2 ? chunks[chunks.length - 2] : undefined;
      if (prev === undefined || endsEvent(prev)) return false;
      const k = marker.length - 1;
      return Buffer.concat([prev.subarray(-k), chunk.subarray(0, k)]).includes(marker);
    };
    const r = httpRequest(
      url,
      {
        method: 'POST',
        agent: false,
        headers: { ...req.headers, 'content-length': Buffer.byteLength(req.body) },
      },
      (res) => {
        if (res.statusCode !== 200 || !/^text\/event-stream/.test(res.headers['content-type'] ?? '')) {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => reject(new Error(`subscriptions/listen: HTTP ${res.statusCode}: ${body}`)));
          return;
        }
        res.on('data', (chunk) => {
          if (recording) {
            arrivals.push(clockNs());
            chunks.push(chunk);
            if (expected !== undefined && found(chunk)) settleExpected();
            return;
          }
          parseText(decoder.write(chunk));
          check();
        });
        const ended = () => {
          failure ??= new Error('push stream ended');
          settleExpected(failure);
          check();
        };
        res.on('end', ended);
        res.on('close', ended);
        resolveStream({
          status,
          until(pred, what) {
            if (failure !== undefined) return Promise.reject(failure);
            if (pred()) return Promise.resolve();
            return new Promise((resolveWait, rejectWait) => {
              const w = { pred, resolve: resolveWait, reject: rejectWait };
              w.timer = setTimeout(() => {
                waiters.delete(w);
                rejectWait(new Error(`push stream: no ${what} within ${PUSH_TIMEOUT_MS} ms`));
              }, PUSH_TIMEOUT_MS);
              waiters.add(w);
            });
          },
          record() {
            recording = true;
          },
          /** Resolves once the event that starts with `marker` (completedMarker) has arrived. */
          expect(marker) {
            if (failure !== undefined) return Promise.reject(failure);
            return new Promise((resolveWait, rejectWait) => {
              expected = { marker, resolve: resolveWait, reject: rejectWait };
              expected.timer = setTimeout(
                () =>
                  settleExpected(new Error(`push stream: no completed event within ${PUSH_TIMEOUT_MS} ms`)),
                PUSH_TIMEOUT_MS,
              );
            });
          },
          /** The events received since `record()`: [{ msg, at }] in order, `at` in clockNs. */
          recorded() {
            recording = false;
            const events = [];
            for (let i = 0; i < chunks.length; i++) {
              parseText(decoder.write(chunks[i]), (msg) => events.push({ msg, at: arrivals[i] }));
            }
            chunks = [];
            arrivals = [];
            check();
            return events;
          },
          close() {
            failure ??= new Error('push stream closed');
            r.destroy();
          },
        });
      },
    );
    r.on('error', (err) => {
      failure ??= err;
      reject(err);
      check();
    });
    r.end(req.body);
  });
}

/**
 * PUSH_STREAMS subscribers; stream s watches every task of group s % PUSH_GROUPS, so each transition is pushed to
 * PUSH_STREAMS / PUSH_GROUPS streams. The tasks are answered one at a time; per answered task and subscriber two
 * events are timed from the commit of their transition (bench/push-server.mjs): `working` (the answer resumed the
 * task) and `completed` (the run's final write). The same events are also timed from what caused them: `working`
 * from just before the tasks/update was sent, `completed` from the moment the handler returned in the worker (its
 * monotonic clock, in the result), just before the worker commits the completion.
 */
async function pushLatency(target, _state, seconds) {
  const steps = Math.max(PUSH_GROUPS, Math.round(seconds * PUSH_STEPS_PER_SECOND));
  const ids = await createTasks(target, createInputTask, steps, 10);
  await waitForInput(target, ids);
  const groups = Array.from({ length: PUSH_GROUPS }, (_, g) => ids.filter((_, j) => j % PUSH_GROUPS === g));
  const streams = [];
  // With replicas, streams and answers go to them round-robin: most pushes cross from one process to another.
  const agent = new Agent({ keepAlive: true, maxSockets: target.urls.length });
  let poller;
  try {
    for (let s = 0; s < PUSH_STREAMS; s += 20) {
      const batch = Array.from({ length: Math.min(20, PUSH_STREAMS - s) }, (_, k) =>
        openTaskStream(
          target.urls[(s + k) % target.urls.length],
          groups[(s + k) % PUSH_GROUPS],
          `push-${s + k}`,
        ),
      );
      streams.push(...(await Promise.all(batch)));
    }
    // Every stream has its snapshot of every task it watches before the first transition.
    await Promise.all(
      streams.map((st, s) =>
        st.until(
          () => groups[s % PUSH_GROUPS].every((id) => st.status.get(id) === 'input_required'),
          'input_required snapshot',
        ),
      ),
    );
    // Commit clocks from now on (every task is waiting for input: the next changes are the timed transitions).
    for (const url of target.urls) await sendTo(url, { method: 'POST', path: '/bench/commits' });
    for (const st of streams) st.record();
    const sent = new Map();
    const updates = [];
    poller = pollDuringSteps(target, ids[0]);
    const started = performance.now();
    // Per answered task: how long this client waited for a core (run queue) while its events were on their way.
    const waited = new Map();
    for (let j = 0; j < steps; j++) {
      const id = ids[j];
      const waitedBefore = runQueueWaitMs();
      poller.watch(id);
      const marker = completedMarker(id);
      const completions = streams
        .filter((_, s) => s % PUSH_GROUPS === j % PUSH_GROUPS)
        .map((st) => st.expect(marker));
      const t0 = clockNs();
      const res = await post(agent, target.urls[j % target.urls.length], answerTask(id));
      updates.push((clockNs() - t0) / 1e6);
      sent.set(id, t0);
      const problem = expectJsonRpcResult(res.status, res.text);
      if (problem !== undefined) throw new Error(`tasks/update ${id}: ${problem}`);
      await Promise.all(completions);
      if (waitedBefore !== undefined) waited.set(id, runQueueWaitMs() - waitedBefore);
    }
    const elapsed = (performance.now() - started) / 1000;
    const polled = await poller.stop();
    poller = undefined;
    // Commit times, read once the round is over (the request would otherwise sit between transitions).
    // The earliest stamp of each transition over the replicas (bench/push-server.mjs).
    const commits = new Map();
    for (const url of target.urls) {
      const res = await sendTo(url, { method: 'GET', path: '/bench/commits' });
      for (const [id, at] of Object.entries(JSON.parse(res.text))) {
        const entry = commits.get(id) ?? {};
        commits.set(id, entry);
        for (const [kind, ns] of Object.entries(at))
          entry[kind] = Math.min(entry[kind] ?? Infinity, serverNs(ns));
      }
    }
    // The server's share, per transition: from its commit to the first and the last of its events being written
    // (bench/push-server.mjs; with replicas, over all of them).
    const written = new Map();
    for (const url of target.urls) {
      const res = await sendTo(url, { method: 'GET', path: '/bench/writes' });
      for (const [id, byKind] of Object.entries(JSON.parse(res.text))) {
        for (const [kind, list] of Object.entries(byKind)) {
          const key = `${id} ${kind}`;
          written.set(key, [...(written.get(key) ?? []), ...list.map(serverNs)]);
        }
      }
    }
    const serverShare = { first: [], last: [] };
    for (const [key, list] of written) {
      const [id, kind] = key.split(' ');
      const at = commits.get(id)?.[kind];
      if (at === undefined || !sent.has(id)) continue;
      serverShare.first.push((Math.min(...list) - at) / 1e6);
      serverShare.last.push((Math.max(...list) - at) / 1e6);
    }
    const byStatus = { working: [], completed: [] };
    const fromCause = { working: [], completed: [] };
    let coalesced = 0;
    // Per answered task: its slowest event (from the commit), over both statuses and all its subscribers.
    const slowest = new Map();
    const timeEvent = (status, id, ms) => {
      byStatus[status].push(ms);
      slowest.set(id, Math.max(slowest.get(id) ?? 0, ms));
    };
    // Per stream, per answered task it watches: the first `working` (unless `completed` came first) and `completed`.
    const seenByStream = streams.map((st) => {
      const seen = new Map();
      for (const { msg, at } of st.recorded()) {
        if (msg.method !== 'notifications/tasks' || !sent.has(msg.params.taskId)) continue;
        const { taskId, status } = msg.params;
        let s = seen.get(taskId);
        if (s === undefined) seen.set(taskId, (s = {}));
        if (status === 'working' && s.working === undefined && s.completed === undefined) s.working = at;
        if (status === 'completed' && s.completed === undefined) {
          s.completed = at;
          const m = /^done (\d+)$/.exec(msg.params.result?.content?.[0]?.text ?? '');
          if (m === null) throw new Error(`completed event of ${taskId} without the handler's clock`);
          s.doneAt = serverNs(m[1]);
        }
      }
      return seen;
    });
    // With replicas a stamp is when a process learnt of the commit, and another replica's read (set out for an
    // earlier change) may see the commit and push it before any process has learnt of it: the commit is then no
    // later than the first event showing it.
    if (target.urls.length > 1) {
      for (const seen of seenByStream) {
        for (const [id, s] of seen) {
          const at = commits.get(id);
          if (at === undefined) continue;
          for (const kind of ['working', 'completed']) {
            if (s[kind] !== undefined && at[kind] !== undefined) at[kind] = Math.min(at[kind], s[kind]);
          }
        }
      }
    }
    for (const seen of seenByStream) {
      for (const [id, s] of seen) {
        const at = commits.get(id);
        if (s.completed === undefined) throw new Error(`stream saw ${id} resume but not complete`);
        if (at?.completed === undefined) throw new Error(`no commit time for the completion of ${id}`);
        timeEvent('completed', id, (s.completed - at.completed) / 1e6);
        fromCause.completed.push((s.completed - s.doneAt) / 1e6);
        if (s.working === undefined) {
          coalesced++;
          continue;
        }
        if (at.working === undefined) throw new Error(`no commit time for the resumption of ${id}`);
        timeEvent('working', id, (s.working - at.working) / 1e6);
        fromCause.working.push((s.working - sent.get(id)) / 1e6);
      }
    }
    // How soon the poller learnt of each transition: its first answer showing the new status, from the commit.
    const discovered = { working: [], completed: [] };
    for (const [id, seen] of polled.firstSeen) {
      const at = commits.get(id);
      for (const st of ['working', 'completed']) {
        if (seen[st] !== undefined && at?.[st] !== undefined) discovered[st].push((seen[st] - at[st]) / 1e6);
      }
    }
    const timed = PUSH_STREAMS / PUSH_GROUPS;
    if (byStatus.completed.length !== steps * timed) {
      throw new Error(`${byStatus.completed.length} completed events timed, expected ${steps * timed}`);
    }
    const latencies = [...byStatus.working, ...byStatus.completed];
    if ([...latencies, ...fromCause.working, ...fromCause.completed].some((ms) => ms < 0)) {
      throw new Error('negative push latency: the server and the harness do not share a monotonic clock');
    }
    updates.sort((a, b) => a - b);
    return latencySample(latencies, elapsed, {
      steps,
      byStatus,
      fromCause,
      coalesced,
      pollRtt: polled.rtt,
      discovered,
      serverShare,
      // [slowest event ms, client run-queue wait ms] per answered task (Linux only).
      stepWaits: [...waited].map(([id, ms]) => [slowest.get(id), ms]),
      updateP50: percentile(updates, 0.5),
      updateP99: percentile(updates, 0.99),
    });
  } finally {
    await poller?.stop().catch(() => undefined);
    for (const st of streams) st.close();
    agent.destroy();
  }
}

/**
 * A client that polls instead of subscribing, next to the push streams: tasks/get of the task being answered
 * (`watch`), one request at a time over its own keep-alive connection (to the last replica), back to back until
 * `stop`. Its round trips are timed under the push's own conditions (the same server, subscribers and
 * transitions), and its first answer that shows a task `working` or `completed` tells how soon the fastest
 * possible poller learns of the transition. `stop` resolves with { rtt: ms[], firstSeen: id → { working?,
 * completed? } (clockNs) }.
 */
function pollDuringSteps(target, first) {
  const url = target.urls[target.urls.length - 1];
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const rtt = [];
  const firstSeen = new Map();
  let current = first;
  let polling = true;
  const loop = (async () => {
    while (polling) {
      const id = current;
      const t0 = clockNs();
      const res = await post(agent, url, getTask(id));
      const at = clockNs();
      const problem = expectJsonRpcResult(res.status, res.text);
      if (problem !== undefined) throw new Error(`tasks/get ${id} while pushing: ${problem}`);
      rtt.push((at - t0) / 1e6);
      // The DetailedTask's status, without parsing the answer (this client shares its process with the streams).
      const status = /"status":"(working|completed)"/.exec(res.text)?.[1];
      if (status === undefined) continue;
      let seen = firstSeen.get(id);
      if (seen === undefined) firstSeen.set(id, (seen = {}));
      // `working` counts only if the poller saw it before `completed`.
      if (status === 'completed' || seen.completed === undefined) seen[status] ??= at;
    }
  })();
  return {
    watch(id) {
      current = id;
    },
    async stop() {
      polling = false;
      try {
        await loop;
      } finally {
        agent.destroy();
      }
      return { rtt, firstSeen };
    },
  };
}

/**
 * Waits until the server's worker has finished every task created so far, so a creation run's queue does not
 * spill CPU into the next row. Reads the server's SQLite file (read-only; WAL lets it read while the server
 * writes): `tasks.runnable` is 1 from creation until the run's final write.
 */
async function drainWorker(target) {
  const db = new Database(target.store, { readonly: true, fileMustExist: true });
  try {
    const count = db.prepare('SELECT count(*) AS n FROM tasks WHERE runnable = 1');
    const started = performance.now();
    const backlog = count.get().n;
    let left = backlog;
    while (left > 0) {
      if (performance.now() - started > DRAIN_TIMEOUT_MS) {
        throw new Error(`${target.key}: ${left} of ${backlog} queued tasks still unfinished after 60 s`);
      }
      await new Promise((r) => setTimeout(r, 20));
      left = count.get().n;
    }
    return { backlog, drainMs: Math.round(performance.now() - started) };
  } finally {
    db.close();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Scale rows: tasks/get with 1k vs 1M stored tasks, memory per open subscription, creation next to waiting tasks.

/** Compact count for row names: 1k, 10k, 1M. */
function fmtCount(n) {
  if (n >= 1e6 && n % 1e6 === 0) return `${n / 1e6}M`;
  if (n >= 1e3 && n % 1e3 === 0) return `${n / 1e3}k`;
  return String(n);
}

/**
 * Fills the two stored-task files before the servers start: our server migrates a fresh file and runs one
 * bench_task to completion on it; bench/scale-tasks.mjs then copies that file and clones the task's row up to
 * SCALE_SMALL and SCALE_LARGE tasks. Returns per size the task count, fill time, file size and sampled ids.
 */
async function prepareScale(ctx) {
  const started = performance.now();
  const base = join(ctx.workDir, 'scale-base.db');
  await runTemplateTask(ctx, 'scale-base', base, createTask('bench_task'), async (target, taskId) => {
    const got = await send(target, getTask(taskId));
    return JSON.parse(got.text).result?.status === 'completed';
  });
  const sizes = {};
  for (const [size, count] of [
    ['small', SCALE_SMALL],
    ['large', SCALE_LARGE],
  ]) {
    sizes[size] = await fillStore(
      base,
      join(ctx.workDir, SCALE_FILES[size]),
      count,
      SCALE_SAMPLE,
      'completed',
    );
    log(
      `scale: ${fmtInt(count)} stored tasks filled in ${sizes[size].ms} ms ` +
        `(${(sizes[size].bytes / 2 ** 20).toFixed(0)} MiB)`,
    );
  }
  return { ...sizes, totalMs: Math.round(performance.now() - started) };
}

/**
 * Starts our server on a fresh SQLite file `base` (it migrates it), sends `request` (a tools/call creating one task),
 * polls `ready(target, taskId)` every 10 ms until the worker has taken the task where the template must be, and
 * stops the server: `base` then holds exactly that task, as the server wrote it.
 */
async function runTemplateTask(ctx, key, base, request, ready) {
  const server = {
    command: (c) =>
      serveStore({ ...c, cpuProf: undefined }, key, base, ['--tools', BENCH_TOOLS, ...UNLIMITED]),
  };
  const target = await startProcess(server, key, ctx);
  try {
    const res = await send(target, request);
    const problem = expectJsonRpcResult(res.status, res.text);
    if (problem !== undefined) throw new Error(`${key}: creating the template task: ${problem}`);
    const { taskId } = JSON.parse(res.text).result;
    for (let waited = 0; !(await ready(target, taskId)); waited += 10) {
      if (waited > DRAIN_TIMEOUT_MS) throw new Error(`${key}: template task ${taskId} did not get ready`);
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    await stopChild(target.child);
  }
}

/**
 * Fills the sleeping-task files of the servers that `scenarios` use, before the servers start: our server migrates a
 * fresh file and runs one bench_sleep task into its sleep (SLEEP_FAR_MS ahead: the task is stored working, not
 * runnable, without lease, with wake_at and the memo of its `nap` sleep in task_steps); bench/scale-tasks.mjs then
 * copies that file and clones the task (its row and its step row) up to SLEEP_SMALL or SLEEP_LARGE sleeping tasks.
 */
async function prepareSleepers(ctx, scenarios) {
  const sizes = [...new Set(scenarios.map((s) => SERVERS[s.server].sleepers))].filter((x) => x !== undefined);
  if (sizes.length === 0) return undefined;
  const started = performance.now();
  const base = join(ctx.workDir, 'sleep-base.db');
  const request = createSleepTask(Date.now() + SLEEP_FAR_MS);
  await runTemplateTask(ctx, 'sleep-base', base, request, (_target, taskId) => {
    const db = new Database(base, { readonly: true, fileMustExist: true });
    try {
      const row = db.prepare('SELECT wake_at, lease_owner FROM tasks WHERE id = ?').get(taskId);
      return row !== undefined && row.wake_at !== null && row.lease_owner === null;
    } finally {
      db.close();
    }
  });
  const filled = {};
  for (const size of sizes) {
    const count = SLEEP_COUNTS[size];
    const { sample: _sample, ...fill } = await fillStore(
      base,
      join(ctx.workDir, SLEEP_FILES[size]),
      count,
      0,
      'sleeping',
    );
    filled[size] = fill;
    log(`sleepers: ${fmtInt(count)} sleeping tasks filled in ${fill.ms} ms`);
  }
  return { ...filled, totalMs: Math.round(performance.now() - started) };
}

/** Runs bench/scale-tasks.mjs (at most SCALE_FILL_TIMEOUT_MS) and returns what it printed. */
function fillStore(source, target, count, sample, kind) {
  return new Promise((resolveFill, reject) => {
    const child = spawn(
      process.execPath,
      [SCALE_TASKS, source, target, String(count), String(sample), kind],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.add(child);
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), SCALE_FILL_TIMEOUT_MS);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      if (code === 0) return resolveFill(JSON.parse(out));
      reject(new Error(`filling ${fmtInt(count)} stored tasks failed (${signal ?? code}): ${err.trim()}`));
    });
  });
}

/** Setup of a stored-task row: the ids sampled from its whole store, visited in turn across runs. */
function scaleGetState(target) {
  return { ids: target.scale.sample, next: 0 };
}

/**
 * tasks/get of the sampled tasks, one request at a time over one keep-alive connection, for `seconds` (at most
 * SCALE_GET_MAX_SECONDS); each run carries on where the previous one stopped, so every request reads another task.
 */
async function scaleGets(target, state, runSeconds) {
  return timeSequentialGets(target, Math.min(runSeconds, SCALE_GET_MAX_SECONDS), () =>
    getTask(state.ids[state.next++ % state.ids.length]),
  );
}

/** Setup of the memory row: MEM_TASKS bench_input tasks, run up to their input and left waiting for good. */
async function createSubscriptionTasks(target) {
  const ids = await createTasks(target, createInputTask, MEM_TASKS, 10);
  await waitForInput(target, ids);
  return { ids };
}

/**
 * Creates `count` tasks with `request` (50 at a time), waits until the worker has run each as far as it goes (no
 * runnable task left) and checks that `countSql` counts all of them in the server's store, `what` they are now.
 */
async function createIdleTasks(target, request, count, countSql, what) {
  const started = performance.now();
  await createTasks(target, request, count, 50);
  await drainWorker(target);
  const db = new Database(target.store, { readonly: true, fileMustExist: true });
  try {
    const found = db.prepare(countSql).pluck().get({ now: Date.now() });
    if (found !== count) throw new Error(`${target.key}: ${found} tasks ${what}, expected ${count}`);
  } finally {
    db.close();
  }
  log(`${target.key}: ${fmtInt(count)} tasks ${what} in ${Math.round(performance.now() - started)} ms`);
  return undefined;
}

/** Setup of the creation row next to waiting tasks: WAITING_TASKS bench_input tasks, all left input_required. */
function createWaitingTasks(target) {
  return createIdleTasks(
    target,
    createInputTask,
    WAITING_TASKS,
    `SELECT count(*) FROM tasks WHERE status = 'input_required'`,
    'waiting for input',
  );
}

/**
 * Setup of the creation row next to retrying tasks: RETRYING_TASKS bench_retry tasks, each with one failed attempt
 * of its step on record and left working, without lease, not runnable, until its retry time (about an hour ahead).
 */
function createRetryingTasks(target) {
  return createIdleTasks(
    target,
    () => createTask('bench_retry'),
    RETRYING_TASKS,
    `SELECT count(*) FROM tasks JOIN task_step_attempts a ON a.task_id = tasks.id AND a.name = 'flaky'
       WHERE status = 'working' AND runnable = 0 AND lease_owner IS NULL AND wake_at > @now AND a.failed = 1`,
    'in retry backoff',
  );
}

/**
 * The server's memory right now, after a full GC: sends SIGUSR2 to the memory probe preloaded into it and reads
 * the `process.memoryUsage()` it writes.
 */
async function probeMemory(target) {
  const file = target.memoryFile;
  rmSync(file, { force: true });
  target.child.kill('SIGUSR2');
  const started = performance.now();
  while (!existsSync(file)) {
    if (performance.now() - started > MEM_TIMEOUT_MS) {
      throw new Error(`${target.key}: no memory probe answer within ${MEM_TIMEOUT_MS} ms`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  const usage = JSON.parse(readFileSync(file, 'utf8'));
  rmSync(file, { force: true });
  return usage;
}

/** Open file descriptors of a process (Linux); undefined elsewhere. */
function openFds(pid) {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return undefined;
  }
}

/**
 * Memory per open stream: probes the server's memory, opens MEM_STREAMS subscriptions/listen streams (50 at a time,
 * each on its own connection, each watching the row's MEM_TASKS tasks), waits until every stream has shown every
 * task as input_required, probes again, closes the streams and waits until the server has closed their sockets.
 * bytesPerStream = growth of V8 heap used + external memory (both after a full GC) ÷ streams; rssPerStream the
 * same for the resident set (which also counts the garbage collector's headroom and native buffers).
 */
async function memoryPerStream(target, state) {
  const fdsBefore = openFds(target.child.pid);
  const before = await probeMemory(target);
  const started = performance.now();
  const streams = [];
  let after;
  try {
    for (let s = 0; s < MEM_STREAMS; s += 50) {
      const batch = Array.from({ length: Math.min(50, MEM_STREAMS - s) }, (_, k) =>
        openTaskStream(target.url, state.ids, `mem-${s + k}`),
      );
      streams.push(...(await Promise.all(batch)));
    }
    await Promise.all(
      streams.map((st) =>
        st.until(
          () => state.ids.every((id) => st.status.get(id) === 'input_required'),
          'input_required snapshot',
        ),
      ),
    );
    after = await probeMemory(target);
  } finally {
    for (const st of streams) st.close();
  }
  const seconds = (performance.now() - started) / 1000;
  for (let waited = 0; ; waited += 20) {
    const fds = openFds(target.child.pid);
    if (fds === undefined || fdsBefore === undefined || fds <= fdsBefore) break;
    if (waited > MEM_TIMEOUT_MS)
      throw new Error(`${target.key}: ${fds - fdsBefore} streams still open after closing`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const per = (field) => Math.round((after[field] - before[field]) / MEM_STREAMS);
  return {
    bytesPerStream: Math.round(
      (after.heapUsed + after.external - before.heapUsed - before.external) / MEM_STREAMS,
    ),
    heapPerStream: per('heapUsed'),
    externalPerStream: per('external'),
    rssPerStream: per('rss'),
    streams: MEM_STREAMS,
    ok: MEM_STREAMS,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    seconds: Math.round(seconds * 1000) / 1000,
  };
}

/**
 * Wake-up lateness: creates WAKES_PER_SECOND × `seconds` bench_sleep tasks (at least 10), their wake times spread
 * evenly over a window of `seconds` that opens WAKE_LEAD_MS from now; waits until the window is over and reads each
 * task's result: how many ms after its wake time its handler resumed, by the server's Date.now() (bench/tools.mjs).
 * A task whose first run began only after its wake time never slept (its handler did not stop at the sleep, and no
 * memo of it is stored): it is left out and counted as `missed`. Also returns the poll interval the server gave them.
 */
async function wakeLateness(target, _state, seconds) {
  const count = Math.max(10, Math.round(WAKES_PER_SECOND * seconds));
  const opens = Date.now() + WAKE_LEAD_MS;
  const wakes = Array.from({ length: count }, (_, i) => Math.round(opens + (i * seconds * 1000) / count));
  const tasks = await createSleepingTasks(target, wakes);
  await new Promise((r) => setTimeout(r, Math.max(0, wakes[count - 1] - Date.now())));
  const late = await readLateness(target, tasks);
  const slept = sleptTasks(target, tasks);
  const latencies = tasks.filter((t) => slept.has(t.id)).map((t) => late.get(t.id));
  if (latencies.length === 0)
    throw new Error(`${target.key}: none of ${count} sample tasks began its sleep in time`);
  const intervals = [...new Set(tasks.map((t) => t.pollIntervalMs))];
  if (intervals.length !== 1 || typeof intervals[0] !== 'number') {
    throw new Error(`${target.key}: the sample tasks came with the poll intervals ${intervals.join(', ')}`);
  }
  return latencySample(latencies, seconds, { intervalMs: intervals[0], missed: count - latencies.length });
}

/** Creates one bench_sleep task per wake time (10 at a time): their ids, wake times and advertised poll intervals. */
async function createSleepingTasks(target, wakes) {
  const tasks = [];
  let next = 0;
  const createOne = async () => {
    while (next < wakes.length) {
      const until = wakes[next++];
      const res = await send(target, createSleepTask(until));
      const problem = expectJsonRpcResult(res.status, res.text);
      if (problem !== undefined) throw new Error(`${target.key}: creating a sleeping task: ${problem}`);
      const { taskId, pollIntervalMs } = JSON.parse(res.text).result;
      tasks.push({ id: taskId, until, pollIntervalMs });
    }
  };
  await Promise.all(Array.from({ length: 10 }, createOne));
  return tasks;
}

/** The lateness each task reported (`late <ms>`) by task id, read with tasks/get (10 at a time) once it completed. */
async function readLateness(target, tasks) {
  const giveUp = performance.now() + WAKE_TIMEOUT_MS;
  const late = new Map();
  let next = 0;
  const readOne = async () => {
    while (next < tasks.length) {
      const task = tasks[next++];
      for (;;) {
        const res = await send(target, getTask(task.id));
        const problem = expectJsonRpcResult(res.status, res.text);
        if (problem !== undefined) throw new Error(`${target.key}: tasks/get ${task.id}: ${problem}`);
        const got = JSON.parse(res.text).result;
        if (got.status === 'completed') {
          const ms = Number(/^late (-?\d+)$/.exec(got.result?.content?.[0]?.text ?? '')?.[1]);
          if (!(ms >= 0)) throw new Error(`${target.key}: unexpected result ${res.text.slice(0, 300)}`);
          late.set(task.id, ms);
          break;
        }
        if (got.status !== 'working' || performance.now() > giveUp) {
          throw new Error(
            `${target.key}: sample task ${task.id} still ${got.status} ${WAKE_TIMEOUT_MS} ms on`,
          );
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  };
  await Promise.all(Array.from({ length: 10 }, readOne));
  return late;
}

/** The ids of those tasks that slept: the memo of their `nap` sleep is in the server's store (read-only). */
function sleptTasks(target, tasks) {
  const db = new Database(target.store, { readonly: true, fileMustExist: true });
  try {
    const ids = db
      .prepare(
        `SELECT task_id FROM task_steps WHERE name = 'nap' AND task_id IN (SELECT value FROM json_each(?))`,
      )
      .pluck()
      .all(JSON.stringify(tasks.map((t) => t.id)));
    return new Set(ids);
  } finally {
    db.close();
  }
}

/**
 * The sleeping-task memory rows: what the server has added to its process since it started, read by the memory
 * probe after a full GC (its reading now minus its reading when it was loaded, before the server's own modules):
 * resident set, and V8 heap used + external. Also counts the sleeping tasks in the server's store.
 */
async function serverFootprint(target) {
  const started = performance.now();
  const usage = await probeMemory(target);
  const { atStart } = usage;
  if (atStart === undefined) throw new Error(`${target.key}: the memory probe sent no start-up reading`);
  const db = new Database(target.store, { readonly: true, fileMustExist: true });
  let sleeping;
  try {
    sleeping = db
      .prepare(`SELECT count(*) FROM tasks WHERE status = 'working' AND wake_at IS NOT NULL`)
      .pluck()
      .get();
  } finally {
    db.close();
  }
  return {
    rssGrowth: usage.rss - atStart.rss,
    heapGrowth: usage.heapUsed + usage.external - atStart.heapUsed - atStart.external,
    rss: usage.rss,
    sleeping,
    ok: 1,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    seconds: Math.round(performance.now() - started) / 1000,
  };
}

// ---------------------------------------------------------------------------------------------------------
// Baseline server (child-process mode of this same file).

function serveBaseline(streams) {
  const answer = streams ? streamBaseline : answerBaseline;
  const server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => answer(res, Buffer.concat(chunks).toString('utf8')));
  });
  server.listen(0, HOST, () => console.log(`listening on http://${HOST}:${server.address().port}/`));
  process.on('SIGTERM', () => process.exit(0));
}

function answerBaseline(res, text) {
  let message;
  try {
    message = JSON.parse(text);
  } catch {
    return sendBaseline(res, 400, {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'Parse error' },
    });
  }
  sendBaseline(res, 200, { jsonrpc: '2.0', id: message?.id ?? null, result: {} });
}

/** Open streams of `--serve-baseline --streams`, held until the client goes away. */
const openStreams = new Set();

/**
 * The memory baseline: every POST becomes an SSE stream that stays open, with one `notifications/tasks` event
 * (status input_required) per task id in `params.notifications.taskIds` — the least a server holding a
 * subscription open can keep per stream (the response, its socket, a place in a set).
 */
function streamBaseline(res, text) {
  let taskIds;
  try {
    taskIds = JSON.parse(text)?.params?.notifications?.taskIds;
  } catch {
    return sendBaseline(res, 400, {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'Parse error' },
    });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const taskId of Array.isArray(taskIds) ? taskIds : []) {
    const event = {
      jsonrpc: '2.0',
      method: 'notifications/tasks',
      params: { taskId, status: 'input_required' },
    };
    res.write(`data: ${JSON.stringify(event)}\n\n`);
  }
  openStreams.add(res);
  res.on('close', () => openStreams.delete(res));
}

function sendBaseline(res, status, payload) {
  const body = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

// ---------------------------------------------------------------------------------------------------------
// Child process management.

const children = new Set();

/**
 * Starts a server's process, or its `replicas` processes (named `<key>-1`, `<key>-2`, …) together; the target's
 * `url` and `child` are the first one's, `urls` and `children` all of them.
 */
async function startServer(key, ctx) {
  const server = SERVERS[key];
  const n = server.replicas ?? 1;
  const names = Array.from({ length: n }, (_, i) => (n === 1 ? key : `${key}-${i + 1}`));
  ctx.started.push(...names);
  const started = await Promise.all(names.map((name) => startProcess(server, name, ctx)));
  const target = {
    ...started[0],
    key,
    children: started.map((t) => t.child),
    urls: started.map((t) => t.url),
  };
  if (server.store !== undefined) target.store = join(ctx.workDir, server.store);
  if (server.env === memProbeEnv) target.memoryFile = memProbeEnv(ctx, key).DURABLE_MCP_BENCH_MEM_PROBE;
  if (server.scale !== undefined) target.scale = ctx.scale[server.scale];
  return target;
}

async function startProcess(server, key, ctx) {
  // stderr goes to a file, not through the harness: our server writes an audit line per task creation there,
  // and reading those would cost the load generator's CPU.
  const errPath = join(ctx.workDir, `${key}.stderr.log`);
  const errFd = openSync(errPath, 'w');
  let child;
  try {
    child = spawn(process.execPath, server.command(ctx, key), {
      cwd: ROOT,
      env: server.env === undefined ? process.env : { ...process.env, ...server.env(ctx, key) },
      stdio: server.ipc ? ['ignore', 'ignore', errFd, 'ipc'] : ['ignore', 'pipe', errFd],
    });
  } finally {
    closeSync(errFd);
  }
  children.add(child);
  child.on('exit', () => children.delete(child));
  // A send to a child that is stopping fails through askChild's callback; never as an unhandled 'error' event.
  child.on('error', () => undefined);
  const target = await waitForStart(key, child, server.ipc === true, errPath);
  return server.ipc ? target : checkLoopback(key, target);
}

function waitForStart(key, child, ipc, errPath) {
  return new Promise((resolveStart, reject) => {
    let out = '';
    let settled = false;
    const settle = (fn, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn(value);
    };
    const fail = (why) => {
      if (settled) return;
      const err = readTail(errPath);
      settle(reject, new Error(`${key} server ${why}${err ? `; its stderr:\n${err}` : ''}`));
    };
    const timer = setTimeout(
      () => fail(`did not start within ${START_TIMEOUT_MS / 1000} s`),
      START_TIMEOUT_MS,
    );
    child.on('exit', (code, signal) => fail(`exited early (${signal ?? code})`));
    if (ipc) {
      child.once('message', (msg) =>
        msg?.type === 'ready'
          ? settle(resolveStart, { key, child, url: `ipc:${key}` })
          : fail(`sent ${msg?.type === 'error' ? msg.message : JSON.stringify(msg)} instead of ready`),
      );
      return;
    }
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) settle(resolveStart, { key, child, url: m[1] });
    });
  });
}

function readTail(path) {
  try {
    return readFileSync(path, 'utf8').trim().slice(-4000);
  } catch {
    return '';
  }
}

/** Sends one message to an `ipc` child and resolves with its answer. */
function askChild(target, message, timeoutMs) {
  const { child, key } = target;
  return new Promise((resolveAnswer, reject) => {
    const done = (fn, value) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      fn(value);
    };
    const onMessage = (msg) =>
      msg?.type === 'error' ? done(reject, new Error(`${key}: ${msg.message}`)) : done(resolveAnswer, msg);
    const onExit = (code, signal) => done(reject, new Error(`${key} exited (${signal ?? code})`));
    const timer = setTimeout(
      () => done(reject, new Error(`${key} did not answer within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
    child.on('message', onMessage);
    child.on('exit', onExit);
    if (!child.connected) return done(reject, new Error(`${key} is gone`));
    child.send(message, (err) => {
      if (err) done(reject, new Error(`${key}: ${err.message}`));
    });
  });
}

function checkLoopback(key, target) {
  const { hostname } = new URL(target.url);
  if (hostname !== HOST) throw new Error(`${key} server listens on ${hostname}, expected ${HOST} only`);
  return target;
}

function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      done();
    });
    child.kill('SIGTERM');
  });
}

function stopAll() {
  return Promise.all([...children].map(stopChild));
}

const workDirs = new Set();

function makeWorkDir() {
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-bench-'));
  workDirs.add(dir);
  return dir;
}

function removeWorkDirs() {
  for (const dir of workDirs) rmSync(dir, { recursive: true, force: true });
  workDirs.clear();
}

/** Last resort on any exit path: no server process or temp dir outlives the harness. */
function cleanUpNow() {
  for (const child of children) child.kill('SIGKILL');
  removeWorkDirs();
}

// ---------------------------------------------------------------------------------------------------------
// Verification and measurement.

function expectJsonRpcResult(status, text) {
  if (status !== 200) return `HTTP ${status} (expected 200): ${text.slice(0, 300)}`;
  let message;
  try {
    message = JSON.parse(text);
  } catch {
    return `response is not a single JSON document: ${text.slice(0, 300)}`;
  }
  if (message?.error !== undefined) return `JSON-RPC error ${JSON.stringify(message.error)}`;
  if (typeof message?.result !== 'object' || message.result === null) return `no JSON-RPC result: ${text}`;
  if (message.result.isError === true) return `tool reported isError: ${text.slice(0, 300)}`;
  return undefined;
}

/** Sends one request (autocannon options shape) with fetch to the target (its first replica). */
function send(target, req) {
  return sendTo(target.url, req);
}

async function sendTo(url, req) {
  const res = await fetch(new URL(req.path ?? '/', url), {
    method: req.method,
    headers: req.headers,
    body: req.body,
  });
  return { status: res.status, text: await res.text() };
}

async function verifyScenario(scenario, target, state) {
  let problem;
  if (scenario.run !== undefined) {
    const sample = await runRow(scenario, target, state, 0.1);
    if (!(sample.ok > 0)) problem = `no operation completed in 0.1 s: ${JSON.stringify(sample)}`;
  } else {
    const res = await send(target, scenario.request(target, state));
    problem = await (scenario.verify ?? expectJsonRpcResult)(res.status, res.text, target);
  }
  if (problem !== undefined) {
    throw new Error(`scenario "${scenario.name}" failed its pre-flight check: ${problem}`);
  }
}

/**
 * The client of the latency rows: a process of its own (`bench/run.mjs --latency-client`) that does nothing but
 * the row it is asked to run, so that what it times is not held up by the harness's own work and garbage
 * collections (its heap holds autocannon and every earlier row's results). Its garbage collector runs on its main
 * thread only (--single-threaded-gc): `perf sched` showed the client's GC helper threads taking the second core
 * of a 2-core machine while the client's own main thread waited for a core to read an event. Set by `benchmark`.
 */
let latencyClient;
/** Settles when the latency client has answered every row sent to it so far. */
let latencyQueue = Promise.resolve();

const LATENCY_CLIENT = { ipc: true, command: () => ['--single-threaded-gc', SELF, '--latency-client'] };

/** A row's `run`, in the latency client for latency rows (their state comes back, as runs may advance it). */
async function runRow(scenario, target, state, seconds) {
  if (scenario.kind !== 'latency' || latencyClient === undefined) {
    return scenario.run(target, state, seconds);
  }
  const view = { key: target.key, url: target.url, urls: target.urls, store: target.store };
  // One row at a time: the pre-flight checks of different servers run side by side.
  const turn = latencyQueue.then(() =>
    askChild(latencyClient, { name: scenario.name, target: view, state, seconds }, seconds * 1000 + 120_000),
  );
  latencyQueue = turn.catch(() => undefined);
  const answer = await turn;
  if (state !== undefined && answer.state !== undefined) Object.assign(state, answer.state);
  return answer.sample;
}

/** `--latency-client`: runs the latency rows the harness sends, one at a time, and answers each with its sample. */
function serveLatencyClient() {
  process.on('message', (msg) => {
    const scenario = SCENARIOS.find((s) => s.name === msg.name);
    Promise.resolve()
      .then(() => {
        if (scenario === undefined) throw new Error(`no row named ${msg.name}`);
        return scenario.run(msg.target, msg.state, msg.seconds);
      })
      .then(
        (sample) => process.send({ type: 'sample', sample, state: msg.state }),
        (err) => process.send({ type: 'error', message: err?.stack ?? String(err) }),
      );
  });
  process.on('disconnect', () => process.exit(0));
  process.send({ type: 'ready' });
}

async function measure(scenario, target, state, params, duration) {
  if (scenario.run !== undefined) return runRow(scenario, target, state, duration);
  // The server's CPU time (all its replicas') over the run and its settle step (the worker finishing the run's
  // tasks).
  const cpuBefore = targetCpuMs(target);
  const writtenBefore = targetWrittenBytes(target);
  const sample = await measureHttp(scenario, target, state, params, duration);
  if (scenario.settle !== undefined) Object.assign(sample, await scenario.settle(target, state));
  const cpuAfter = targetCpuMs(target);
  const writtenAfter = targetWrittenBytes(target);
  sample.cpuUs =
    cpuBefore === undefined || cpuAfter === undefined || sample.ok === 0
      ? null
      : Math.round(((cpuAfter - cpuBefore) * 1000 * 10) / sample.ok) / 10;
  sample.writtenKb =
    writtenBefore === undefined || writtenAfter === undefined || sample.ok === 0
      ? null
      : Math.round(((writtenAfter - writtenBefore) / 1024 / sample.ok) * 100) / 100;
  return sample;
}

/**
 * Bytes the target's processes (all replicas) have had written to disk so far (Linux: `write_bytes` of
 * /proc/<pid>/io, which counts a SQLite store's WAL appends and checkpoints); undefined elsewhere. Where fsyncs
 * bound creation, what a task costs on disk explains its rate.
 */
function targetWrittenBytes(target) {
  let total = 0;
  for (const child of target.children) {
    try {
      total += Number(/^write_bytes: (\d+)$/m.exec(readFileSync(`/proc/${child.pid}/io`, 'utf8'))[1]);
    } catch {
      return undefined;
    }
  }
  return total;
}

const CLOCK_TICKS = (() => {
  const out = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(out.stdout?.trim());
  return Number.isInteger(n) && n > 0 ? n : 100;
})();

function targetCpuMs(target) {
  let total = 0;
  for (const child of target.children) {
    const ms = processCpuMs(child.pid);
    if (ms === undefined) return undefined;
    total += ms;
  }
  return total;
}

/** User + system CPU time of a process in ms, from /proc (Linux); undefined elsewhere. */
function processCpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/**
 * One autocannon run; against several replicas, one autocannon instance per replica at the same time, the
 * connections split evenly among them (round-robin), their counts added up and the largest p50/p99 kept.
 */
async function measureHttp(scenario, target, state, params, duration) {
  const req = scenario.request(target, state);
  const n = target.urls.length;
  const results = await Promise.all(
    target.urls.map((url, i) =>
      autocannon({
        ...req,
        url: new URL(req.path ?? '/', url).href,
        connections: Math.floor(params.connections / n) + (i < params.connections % n ? 1 : 0),
        pipelining: params.pipelining,
        duration,
      }),
    ),
  );
  const samples = results.map(toSample);
  if (samples.length === 1) return samples[0];
  const total = (field) => sum(samples.map((x) => x[field]));
  return {
    rps: round1(total('rps')),
    p50: Math.max(...samples.map((x) => x.p50)),
    p99: Math.max(...samples.map((x) => x.p99)),
    ok: total('ok'),
    non2xx: total('non2xx'),
    errors: total('errors'),
    timeouts: total('timeouts'),
    seconds: Math.max(...samples.map((x) => x.seconds)),
  };
}

function toSample(result) {
  return {
    rps: round1(result['2xx'] / result.duration),
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    seconds: result.duration,
  };
}

async function runRounds(scenarios, targets, states, params) {
  const samples = new Map(scenarios.map((s) => [s.name, []]));
  for (let round = 1; round <= params.rounds; round++) {
    for (const s of scenarios) {
      const sample = await measure(s, targets[s.server], states.get(s.name), params, params.duration);
      samples.get(s.name).push({ round, ...sample });
      log(`round ${round}/${params.rounds}  ${s.name.padEnd(40)} ${fmtProgress(s, sample)}`);
    }
  }
  return samples;
}

async function warmUp(scenarios, targets, states, params) {
  if (params.warmup <= 0) return;
  for (const s of scenarios) {
    const sample = await measure(s, targets[s.server], states.get(s.name), params, params.warmup);
    log(`warm-up ${params.warmup} s  ${s.name.padEnd(40)} ${fmtProgress(s, sample)}`);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Statistics and reporting.

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function round1(n) {
  return Math.round(n * 10) / 10;
}

function sum(values) {
  return values.reduce((a, b) => a + b, 0);
}

const SUMMARIZE = { latency: summarizeLatency, memory: summarizeMemory, footprint: summarizeFootprint };

function summarize(scenarios, samples) {
  const rows = scenarios.map((s) => (SUMMARIZE[s.kind] ?? summarizeOne)(s, samples.get(s.name)));
  const byName = new Map(rows.map((r) => [r.name, r]));
  const ratio = (a, b) => Math.round((a / b) * 100) / 100;
  for (const row of rows) {
    const base = row.baseline === null ? undefined : byName.get(row.baseline);
    if (row.kind === 'memory') {
      row.ratio = base === undefined ? null : ratio(row.median.bytesPerStream, base.median.bytesPerStream);
      continue;
    }
    if (row.kind === 'footprint') {
      row.ratio =
        base === undefined
          ? null
          : {
              rss: ratio(row.median.rssGrowth, base.median.rssGrowth),
              heap: ratio(row.median.heapGrowth, base.median.heapGrowth),
            };
      if (row.target !== undefined)
        row.target.met = row.ratio === null ? null : row.ratio.rss <= row.target.maxRatio;
      continue;
    }
    if (row.kind !== 'latency') {
      row.ratio = base === undefined ? null : ratio(row.median.rps, base.median.rps);
      const vs = (name) => {
        const other = byName.get(name);
        return other === undefined ? null : ratio(row.median.rps, other.median.rps);
      };
      if (row.also !== undefined) row.also = row.also.map((name) => ({ name, ratio: vs(name) }));
      if (row.targets !== undefined) {
        row.targets = row.targets.map((t) => {
          const r = vs(t.vs);
          return { ...t, ratio: r, met: r === null ? null : r >= t.min };
        });
      }
      continue;
    }
    row.ratio = base === undefined ? null : { p50: ratio(row.p50, base.p50), p99: ratio(row.p99, base.p99) };
    if (row.poll !== undefined) {
      row.poll.ratio = { p50: ratio(row.p50, row.poll.p50), p99: ratio(row.p99, row.poll.p99) };
    }
    if (row.intervalMs !== undefined) {
      row.interval = {
        ms: row.intervalMs,
        p50: ratio(row.p50, row.intervalMs),
        p99: ratio(row.p99, row.intervalMs),
      };
    }
    // A target is against the baseline row, with `vs: 'poll'` against the round trips of the row's own poller, with
    // `vs: 'interval'` against the poll interval the server advertised for the row's tasks.
    const against =
      row.target?.vs === undefined
        ? row.ratio
        : { poll: row.poll?.ratio, interval: row.interval }[row.target.vs];
    if (row.target !== undefined && against != null) {
      const { p50Ratio, p99Ratio } = row.target;
      row.target.ratio = against;
      row.target.met =
        (p99Ratio === undefined || against.p99 < p99Ratio) &&
        (p50Ratio === undefined || against.p50 <= p50Ratio);
    }
  }
  return rows;
}

/** A memory row: medians over rounds of the per-stream growth. */
function summarizeMemory(scenario, list) {
  const bytes = list.map((x) => x.bytesPerStream);
  return {
    name: scenario.name,
    server: scenario.server,
    baseline: scenario.baseline,
    kind: 'memory',
    unit: 'bytes per open stream (V8 heap used + external, after a full GC)',
    streams: MEM_STREAMS,
    samples: list,
    median: {
      bytesPerStream: median(bytes),
      heapPerStream: median(list.map((x) => x.heapPerStream)),
      externalPerStream: median(list.map((x) => x.externalPerStream)),
      rssPerStream: median(list.map((x) => x.rssPerStream)),
    },
    min: { bytesPerStream: Math.min(...bytes) },
    max: { bytesPerStream: Math.max(...bytes) },
    non2xx: 0,
    errors: 0,
  };
}

/** A latency row: percentiles over every event of every round (not medians of per-round percentiles). */
function summarizeLatency(scenario, list) {
  const extra = (field) =>
    list.every((x) => x[field] !== undefined)
      ? Math.round(median(list.map((x) => x[field])) * 1000) / 1000
      : undefined;
  return {
    name: scenario.name,
    server: scenario.server,
    baseline: scenario.baseline,
    kind: 'latency',
    unit: 'ms per event',
    // Per round, its figures without the per-event lists (those are pooled below).
    samples: list.map((x) =>
      Object.fromEntries(Object.entries(x).filter(([, v]) => typeof v !== 'object' || v === null)),
    ),
    ...pooledStats(list.map((x) => x.latencies)),
    ...(list.some((x) => x.byStatus !== undefined)
      ? {
          byStatus: pooledByStatus(list, 'byStatus'),
          fromCause: pooledByStatus(list, 'fromCause'),
          coalesced: sum(list.map((x) => x.coalesced)),
          answered: sum(list.map((x) => x.steps)),
          poll: pooledStats(list.map((x) => x.pollRtt)),
          runQueue: runQueueSummary(list.flatMap((x) => x.stepWaits ?? [])),
          discovery: pooledByStatus(list, 'discovered'),
          server: {
            first: pooledStats(list.map((x) => x.serverShare.first)),
            last: pooledStats(list.map((x) => x.serverShare.last)),
          },
          updateP50: extra('updateP50'),
          updateP99: extra('updateP99'),
        }
      : {}),
    ...(list.every((x) => x.intervalMs !== undefined)
      ? { intervalMs: Math.max(...list.map((x) => x.intervalMs)), missed: sum(list.map((x) => x.missed)) }
      : {}),
    ...(scenario.target === undefined ? {} : { target: { ...scenario.target } }),
    non2xx: 0,
    errors: 0,
  };
}

/** A sleeping-task memory row: medians over rounds of what the server added to its process since it started. */
function summarizeFootprint(scenario, list) {
  const rss = list.map((x) => x.rssGrowth);
  return {
    name: scenario.name,
    server: scenario.server,
    baseline: scenario.baseline,
    kind: 'footprint',
    unit: 'bytes the server process grew by since the memory probe loaded (after a full GC)',
    samples: list,
    sleeping: Math.max(...list.map((x) => x.sleeping)),
    median: {
      rssGrowth: median(rss),
      heapGrowth: median(list.map((x) => x.heapGrowth)),
      rss: median(list.map((x) => x.rss)),
    },
    min: { rssGrowth: Math.min(...rss) },
    max: { rssGrowth: Math.max(...rss) },
    ...(scenario.target === undefined ? {} : { target: { ...scenario.target } }),
    non2xx: 0,
    errors: 0,
  };
}

/** Steps slower than this (their slowest event, ms) count as slow in the run-queue summary. */
const SLOW_STEP_MS = 1;

/**
 * The push client's waits for a core, from [slowest event ms, run-queue wait ms] per answered task: the mean
 * wait in the steps whose slowest event took over SLOW_STEP_MS and in the others. Null without schedstat.
 */
function runQueueSummary(steps) {
  if (steps.length === 0) return null;
  const mean = (xs) => (xs.length === 0 ? null : Math.round((sum(xs) / xs.length) * 1000) / 1000);
  const slow = steps.filter(([ms]) => ms > SLOW_STEP_MS);
  const fast = steps.filter(([ms]) => ms <= SLOW_STEP_MS);
  return {
    steps: steps.length,
    slowSteps: slow.length,
    slowWaitMs: mean(slow.map(([, w]) => w)),
    fastWaitMs: mean(fast.map(([, w]) => w)),
  };
}

/** Events, percentiles, worst and per-round p99 range of the rounds' lists of ms. */
function pooledStats(lists) {
  const all = lists.flat().sort((a, b) => a - b);
  const p99s = lists.map((l) =>
    percentile(
      [...l].sort((a, b) => a - b),
      0.99,
    ),
  );
  return {
    events: all.length,
    p50: percentile(all, 0.5),
    p99: percentile(all, 0.99),
    max: Math.round(all[all.length - 1] * 1000) / 1000,
    p99Range: { min: Math.min(...p99s), max: Math.max(...p99s) },
  };
}

/** Per status (working, completed): events and percentiles pooled over every round's `field` lists. */
function pooledByStatus(list, field) {
  return Object.fromEntries(
    ['working', 'completed'].map((st) => {
      const pooled = list.flatMap((x) => x[field]?.[st] ?? []).sort((a, b) => a - b);
      return [st, { events: pooled.length, p50: percentile(pooled, 0.5), p99: percentile(pooled, 0.99) }];
    }),
  );
}

function summarizeOne(scenario, list) {
  const rps = list.map((x) => x.rps);
  return {
    name: scenario.name,
    server: scenario.server,
    baseline: scenario.baseline,
    ...(scenario.also === undefined ? {} : { also: scenario.also }),
    ...(scenario.targets === undefined ? {} : { targets: scenario.targets }),
    unit: scenario.run === undefined ? '2xx responses/s' : 'statements/s',
    samples: list,
    median: {
      rps: round1(median(rps)),
      p50: median(list.map((x) => x.p50)),
      p99: median(list.map((x) => x.p99)),
      cpuUs: list.every((x) => typeof x.cpuUs === 'number') ? median(list.map((x) => x.cpuUs)) : null,
      writtenKb: list.every((x) => typeof x.writtenKb === 'number')
        ? median(list.map((x) => x.writtenKb))
        : null,
    },
    min: { rps: Math.min(...rps) },
    max: { rps: Math.max(...rps) },
    non2xx: sum(list.map((x) => x.non2xx)),
    errors: sum(list.map((x) => x.errors + x.timeouts)),
    ...(list.some((x) => x.backlog !== undefined)
      ? {
          drain: {
            maxBacklog: Math.max(...list.map((x) => x.backlog)),
            maxMs: Math.max(...list.map((x) => x.drainMs)),
          },
        }
      : {}),
  };
}

function fmtInt(n) {
  return Math.round(n).toLocaleString('en-US');
}

function fmtRatio(row) {
  if (row.baseline === null) return '1.00 (baseline)';
  return `${row.ratio.toFixed(2)} × ${row.baseline}`;
}

function fmtProgress(scenario, sample) {
  if (scenario.kind === 'memory') {
    return `${fmtInt(sample.bytesPerStream).padStart(8)} bytes/stream (RSS ${fmtInt(sample.rssPerStream)})`;
  }
  if (scenario.kind === 'latency') {
    return `${String(sample.ok).padStart(6)} events  p50 ${sample.p50} ms  p99 ${sample.p99} ms`;
  }
  if (scenario.kind === 'footprint') {
    return `RSS +${fmtMiB(sample.rssGrowth)} MiB, heap + external +${fmtMiB(sample.heapGrowth)} MiB since start`;
  }
  return `${fmtInt(sample.rps).padStart(8)} ops/s${fmtDrain(sample)}`;
}

/** Bytes as MiB with one decimal. */
function fmtMiB(bytes) {
  return (bytes / 2 ** 20).toFixed(1);
}

function fmtDrain(sample) {
  if (sample.backlog === undefined) return '';
  return `  (worker backlog ${fmtInt(sample.backlog)}, drained in ${sample.drainMs} ms)`;
}

/**
 * For a SQLite row with a target against another row (keys, retrying tasks): the bytes its server wrote to disk per
 * created task next to that row's, which tells disk work (what fsync-bound creation pays for) from CPU.
 */
function writtenNote(r, rows) {
  const vs = rows.find((x) => x.name === r.targets?.[0]?.vs);
  if (r.median.writtenKb == null || vs?.median.writtenKb == null || r.median.writtenKb < 0.1)
    return undefined;
  return (
    `${r.name}: the server wrote ${r.median.writtenKb.toFixed(1)} KB to disk per created task (median over ` +
    `rounds, the worker's writes included), against ${vs.median.writtenKb.toFixed(1)} KB in ${vs.name}.`
  );
}

function drainNote(r) {
  return (
    `${r.name}: at the end of a run at most ${fmtInt(r.drain.maxBacklog)} created tasks were still ` +
    `unfinished; the worker finished them within ${r.drain.maxMs} ms, before the next row started.`
  );
}

function markdown(report) {
  const { machine, parameters: p } = report;
  const throughput = report.scenarios.filter((r) => r.kind === undefined);
  const latency = report.scenarios.filter((r) => r.kind === 'latency');
  const memory = report.scenarios.filter((r) => r.kind === 'memory');
  const footprint = report.scenarios.filter((r) => r.kind === 'footprint');
  const lines = [
    `## durable-mcp benchmark — ${machine.date}`,
    '',
    `Machine: ${machine.cpuModel} × ${machine.cores} cores, ${machine.totalMemGiB} GiB, ` +
      `${machine.platform} ${machine.release}, Node ${machine.node}, commit ${machine.commit}, ` +
      `load average at start ${machine.loadavg.join(' / ')}.`,
    `Load: autocannon ${report.loadGenerator.version} in the parent process, ${p.connections} connections, ` +
      `pipelining ${p.pipelining}; ${p.rounds} interleaved rounds × ${p.duration} s after a ${p.warmup} s ` +
      `warm-up per scenario. Servers in separate child processes on ${HOST}; the raw better-sqlite3 rows ` +
      `run a single-threaded loop in their own child process for the same ${p.duration} s, without load ` +
      `generator, and the raw pg rows ${PG_CONNECTIONS} concurrent loops (one per connection) in theirs.`,
    '',
    '| scenario | ops/s median | ops/s min–max | p50 ms | p99 ms | CPU µs/op | non-2xx | errors | ratio vs baseline | ratio vs peer / other | target |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...throughput.map(tableRow),
    '',
    'ops/s: 2xx responses per second for HTTP rows (p50/p99 at 1 ms resolution), statements per second for ' +
      'raw rows (each insert its own committed transaction; p50/p99 per statement). p50/p99 are ' +
      "medians of the per-round percentiles. CPU µs/op: median over rounds of the server process's CPU time " +
      "(user + system) per operation — for the creation row including the worker finishing the run's tasks; " +
      "for raw rows the child's, without fsync waits. ratio = median ops/s ÷ median ops/s of the named " +
      'row from the same run. The peer (official TypeScript SDK v2, bench/sdk-peer.mjs) receives byte-for-byte ' +
      'the same requests as ours and lists the same tools; it has no tasks, so the task rows are compared with ' +
      'its synchronous tools/call echo.',
  ];
  const drained = report.scenarios.filter((r) => r.drain !== undefined);
  if (drained.length > 0) lines.push('', ...drained.map((r) => `- ${drainNote(r)}`));
  const written = throughput.map((r) => writtenNote(r, throughput)).filter((line) => line !== undefined);
  if (written.length > 0) lines.push('', ...written.map((line) => `- ${line}`));
  if (report.postgres.skipped !== undefined) {
    lines.push('', `- PostgreSQL rows skipped: ${report.postgres.skipped}`);
  } else {
    lines.push(
      '',
      `- PostgreSQL rows: ${report.postgres.url}, a fresh schema per server (set), dropped at the end; our ` +
        'servers run no worker (`--concurrency 0`), so the creation rows are the creation path and the tasks ' +
        `stay \`working\`; ${PG_REPLICAS} replicas = ${PG_REPLICAS} processes on one schema, one autocannon ` +
        'instance each (connections split evenly; p50/p99 the largest of the instances). CPU µs/op: our ' +
        "processes' (all replicas), or the raw child's; PostgreSQL's own CPU is in neither.",
    );
  }
  if (latency.length > 0) lines.push('', ...latencyTable(latency));
  if (report.scale?.skipped !== undefined) {
    lines.push('', `- Stored-task rows skipped: ${report.scale.skipped}`);
  } else if (report.scale !== undefined) {
    const { small, large, totalMs } = report.scale;
    lines.push(
      '',
      `- Stored-task rows: ${fmtInt(small.count)} and ${fmtInt(large.count)} completed tasks of the bench ` +
        'principal, cloned from one task our server ran (bench/scale-tasks.mjs); filled in ' +
        `${small.ms} ms and ${(large.ms / 1000).toFixed(1)} s (${(large.bytes / 2 ** 20).toFixed(0)} MiB), ` +
        `${(totalMs / 1000).toFixed(1)} s with the template run. Each tasks/get reads another task, sampled ` +
        `from the whole store (${fmtInt(SCALE_SAMPLE)} samples, visited in turn).`,
    );
  }
  if (memory.length > 0) lines.push('', ...memoryTable(memory));
  if (footprint.length > 0) lines.push('', ...footprintTable(footprint, report.sleepers));
  return lines.join('\n') + '\n';
}

function latencyTable(rows) {
  const fmtRatios = (r) =>
    r.baseline === null
      ? '1.00 / 1.00 (baseline)'
      : `${r.ratio.p50.toFixed(2)} / ${r.ratio.p99.toFixed(2)} × ${r.baseline}`;
  const fmtTarget = (r) =>
    r.target === undefined
      ? '–'
      : `${r.target.text}: ${r.target.vs === undefined ? '' : `${r.target.ratio.p99.toFixed(2)} × → `}` +
        `**${r.target.met ? 'met' : 'not met'}**`;
  // A push row's poller: its round trips, compared with the row's baseline like the push row itself.
  const pollLine = (r) => {
    const base = rows.find((x) => x.name === r.baseline);
    const vsBase =
      base === undefined
        ? '–'
        : `${(r.poll.p50 / base.p50).toFixed(2)} / ${(r.poll.p99 / base.p99).toFixed(2)} × ${r.baseline}`;
    return [
      '',
      `↳ tasks/get round trip of a poller during those rounds`,
      fmtInt(r.poll.events),
      r.poll.p50.toFixed(3),
      r.poll.p99.toFixed(3),
      `${r.poll.p99Range.min.toFixed(3)}–${r.poll.p99Range.max.toFixed(3)}`,
      r.poll.max.toFixed(3),
      vsBase,
      '–',
      '',
    ]
      .join(' | ')
      .trim();
  };
  const lines = [
    '### Latency',
    '',
    '| row | events | p50 ms | p99 ms | p99 min–max over rounds | max ms | ratio p50 / p99 vs baseline | target |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...rows.flatMap((r) => [
      [
        '',
        r.name,
        fmtInt(r.events),
        r.p50.toFixed(3),
        r.p99.toFixed(3),
        `${r.p99Range.min.toFixed(3)}–${r.p99Range.max.toFixed(3)}`,
        r.max.toFixed(3),
        fmtRatios(r),
        fmtTarget(r),
        '',
      ]
        .join(' | ')
        .trim(),
      ...(r.poll === undefined ? [] : [pollLine(r)]),
    ]),
    '',
    'Percentiles over every timed event of every round (client-side monotonic clock, 0.001 ms). tasks/get: one ' +
      'request at a time over one keep-alive connection, polling input_required tasks (the stored-task rows: ' +
      'completed tasks sampled from the whole store, another one per request). Push: ' +
      `${PUSH_STREAMS} SSE streams, each watching the tasks of one of ${PUSH_GROUPS} groups (each transition ` +
      `reaches ${PUSH_STREAMS / PUSH_GROUPS} streams); tasks answered one at a time; per stream and task, ` +
      'each event timed from the commit of its transition (`working`: the answer that resumed the task; ' +
      "`completed`: the run's final write) to the moment the subscriber parsed it. The commit time is the " +
      "server's CLOCK_MONOTONIC reading in the first listener of the store's change feed, right after the " +
      'commit and before any subscriber is told (bench/push-server.mjs); the client reads the same clock. ' +
      "With replicas: the earliest such reading over them (a process learns of another's commit through " +
      'NOTIFY), or the first event showing the change if that came sooner (a read on one replica can see a ' +
      'commit before any process has learnt of it). ' +
      'Poller: during the same rounds, one more client polls tasks/get of the task being answered, one request ' +
      'at a time, back to back, over its own connection: the round trip a client pays at that load instead of ' +
      'subscribing. The latency rows run in a client process of their own (bench/run.mjs --latency-client), ' +
      'which keeps the stream chunks unparsed, with their arrival time, until the timed steps are over.',
  ];
  for (const r of rows.filter((x) => x.interval !== undefined)) {
    lines.push(
      '',
      `- ${r.name}: ${fmtInt(r.events)} sample tasks woke (${Math.round(WAKES_PER_SECOND)} per second of ` +
        `run, their wake times spread evenly over the run's length from ${WAKE_LEAD_MS} ms after it started); ` +
        `from its wake time to its handler resuming p50 ${r.p50} ms, p99 ${r.p99} ms: ${r.interval.p50} / ${r.interval.p99} × the ` +
        `pollIntervalMs the server gave them (${fmtInt(r.interval.ms)} ms). ` +
        (r.missed === 0
          ? 'Every sample task had begun its sleep before its wake time.'
          : `${fmtInt(r.missed)} more began their first run only after their wake time (they never slept) and are not counted.`),
    );
  }
  for (const r of rows.filter((x) => x.byStatus !== undefined)) {
    const { working: w, completed: c } = r.byStatus;
    const cause = r.fromCause;
    lines.push(
      '',
      `- ${r.name}: from the commit, \`working\` events p50 ${w.p50} ms, p99 ${w.p99} ms; \`completed\` ` +
        `events p50 ${c.p50} ms, p99 ${c.p99} ms.` +
        (cause === undefined
          ? ''
          : ` From what caused them: \`working\` from just before the tasks/update request was sent p50 ` +
            `${cause.working.p50} ms, p99 ${cause.working.p99} ms; \`completed\` from the handler's return ` +
            `(before the completion commit) p50 ${cause.completed.p50} ms, p99 ${cause.completed.p99} ms.`) +
        ` The tasks/update round trip itself (the write that commits \`working\`): p50 ${r.updateP50} ms, ` +
        `p99 ${r.updateP99} ms (medians over rounds). ${fmtInt(r.coalesced)} \`working\` events were ` +
        'coalesced into the `completed` one (the stream was sent the later state). The server passed the ' +
        `first of a transition's ${PUSH_STREAMS / PUSH_GROUPS} events to its socket p50 ${r.server.first.p50} ms, ` +
        `p99 ${r.server.first.p99} ms after the commit, and the last p50 ${r.server.last.p50} ms, p99 ` +
        `${r.server.last.p99} ms (${fmtInt(r.server.last.events)} transitions). The poller first showed ` +
        `\`working\` p50 ${r.discovery.working.p50} ms, p99 ${r.discovery.working.p99} ms and \`completed\` ` +
        `p50 ${r.discovery.completed.p50} ms, p99 ${r.discovery.completed.p99} ms after their commits ` +
        `(${fmtInt(r.discovery.working.events)} and ${fmtInt(r.discovery.completed.events)} of ` +
        `${fmtInt(r.answered)} answered tasks: it polls one task at a time and moves on with the answers).` +
        (r.runQueue == null
          ? ''
          : ` While the events of a task were on their way, the push client waited for a core (its run-queue ` +
            `time, /proc/self/schedstat) ${r.runQueue.slowWaitMs ?? '–'} ms on average in the ` +
            `${fmtInt(r.runQueue.slowSteps)} tasks whose slowest event took over ${SLOW_STEP_MS} ms, and ` +
            `${r.runQueue.fastWaitMs ?? '–'} ms in the other ${fmtInt(r.runQueue.steps - r.runQueue.slowSteps)}.`),
    );
  }
  return lines;
}

function memoryTable(rows) {
  const fmtBytes = (n) => fmtInt(n);
  return [
    `### Memory per open stream (${fmtInt(MEM_STREAMS)} streams at once)`,
    '',
    '| row | bytes/stream median | min–max over rounds | V8 heap | external | RSS | ratio vs baseline |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${[
          r.name,
          fmtBytes(r.median.bytesPerStream),
          `${fmtBytes(r.min.bytesPerStream)}–${fmtBytes(r.max.bytesPerStream)}`,
          fmtBytes(r.median.heapPerStream),
          fmtBytes(r.median.externalPerStream),
          fmtBytes(r.median.rssPerStream),
          fmtRatio(r),
        ].join(' | ')} |`,
    ),
    '',
    `bytes/stream: growth of the server's V8 heap used + external memory, both after a full GC, with ` +
      `${fmtInt(MEM_STREAMS)} subscriptions/listen streams open (each on its own connection, each watching the ` +
      `same ${MEM_TASKS} input_required tasks and having shown all of them), ÷ ${fmtInt(MEM_STREAMS)}; median ` +
      'over rounds, as are the V8 heap and external parts. RSS: growth of the resident set over the same ' +
      "interval ÷ streams (it also counts the garbage collector's headroom and native buffers, and is noisier). " +
      'The baseline is a bare node:http server holding each request open as an SSE stream with one event per task.',
  ];
}

function footprintTable(rows, sleepers) {
  const fmtRatios = (r) =>
    r.ratio === null
      ? '1.00 / 1.00 (baseline)'
      : `${r.ratio.rss.toFixed(2)} / ${r.ratio.heap.toFixed(2)} × ${r.baseline}`;
  const fmtTarget = (r) =>
    r.target === undefined
      ? '–'
      : `${r.target.text}: ${r.ratio.rss.toFixed(2)} × → **${r.target.met ? 'met' : 'not met'}**`;
  const fills = Object.entries(sleepers ?? {})
    .filter(([size]) => SLEEP_COUNTS[size] !== undefined)
    .map(([, f]) => `${fmtInt(f.count)} in ${(f.ms / 1000).toFixed(1)} s`);
  return [
    '### Server memory with sleeping tasks',
    '',
    '| row | sleeping tasks | RSS growth MiB median | min–max over rounds | V8 heap + external growth MiB | RSS MiB | ratio RSS / heap growth vs baseline | target |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...rows.map(
      (r) =>
        `| ${[
          r.name,
          fmtInt(r.sleeping),
          fmtMiB(r.median.rssGrowth),
          `${fmtMiB(r.min.rssGrowth)}–${fmtMiB(r.max.rssGrowth)}`,
          fmtMiB(r.median.heapGrowth),
          fmtMiB(r.median.rss),
          fmtRatios(r),
          fmtTarget(r),
        ].join(' | ')} |`,
    ),
    '',
    'Growth: what the server process added since it started, read by the memory probe after a full GC (its reading ' +
      'after the round minus its reading when it was preloaded, before any of the server’s own modules): the ' +
      'resident set (RSS), and V8 heap used + external memory. Medians over rounds; each reading follows the ' +
      'wake-up lateness rows of its round, so both servers have served the same requests and woken the same ' +
      'sample tasks. Sleeping tasks: working tasks with a wake-up time in the store when the probe ran. The ' +
      'stores were cloned from one task our server put to sleep (its row and its step row, bench/scale-tasks.mjs)' +
      (fills.length === 0 ? '.' : `: ${fills.join(', ')}.`),
  ];
}

function fmtAlso(r) {
  if (r.also === undefined) return '–';
  return r.also
    .map((a) => (a.ratio === null ? `– × ${a.name}` : `${a.ratio.toFixed(2)} × ${a.name}`))
    .join('; ');
}

function fmtTargets(r) {
  if (r.targets === undefined) return '–';
  return r.targets
    .map(
      (t) => `≥ ${t.min} × ${t.vs}: ${t.met === null ? 'not measured' : `**${t.met ? 'met' : 'not met'}**`}`,
    )
    .join('; ');
}

function tableRow(r) {
  const range = `${fmtInt(r.min.rps)}–${fmtInt(r.max.rps)}`;
  const cells = [
    r.name,
    fmtInt(r.median.rps),
    range,
    r.median.p50,
    r.median.p99,
    r.median.cpuUs === null ? '–' : r.median.cpuUs.toFixed(1),
    r.non2xx,
    r.errors,
    fmtRatio(r),
    fmtAlso(r),
    fmtTargets(r),
  ];
  return `| ${cells.join(' | ')} |`;
}

function gitCommit() {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  if (head.status !== 0) return 'unknown';
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return `${head.stdout.trim()}${dirty.stdout.trim() ? ' (dirty)' : ''}`;
}

function machineInfo() {
  const cpu = cpus();
  return {
    cpuModel: cpu[0]?.model.trim() ?? 'unknown',
    cores: cpu.length,
    totalMemGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    platform: platform(),
    release: release(),
    node: process.version,
    loadavg: loadavg().map(round1),
    commit: gitCommit(),
    date: new Date().toISOString(),
  };
}

function autocannonVersion() {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'autocannon', 'package.json'), 'utf8'));
  return pkg.version;
}

function writeResults(report, md) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, 'latest.json'), JSON.stringify(report, null, 2) + '\n');
  writeFileSync(join(RESULTS_DIR, 'latest.md'), md);
}

function log(line) {
  process.stderr.write(`bench: ${line}\n`);
}

// ---------------------------------------------------------------------------------------------------------
// Command line and main flow.

function positiveInt(raw, flag, allowZero = false) {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < (allowZero ? 0 : 1)) {
    throw new UsageError(`--${flag} must be ${allowZero ? 'a non-negative' : 'a positive'} integer`);
  }
  return n;
}

class UsageError extends Error {}

function parseFlags(argv) {
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
    throw new UsageError(err.message);
  }
}

function parseParams(argv) {
  const values = parseFlags(argv);
  const preset = values.quick ? PRESETS.quick : PRESETS.default;
  const pick = (flag, allowZero) =>
    values[flag] === undefined ? preset[flag] : positiveInt(values[flag], flag, allowZero);
  return {
    help: values.help === true,
    mode: values.quick ? 'quick' : 'default',
    duration: pick('duration'),
    rounds: pick('rounds'),
    warmup: pick('warmup', true),
    connections: pick('connections'),
    pipelining: pick('pipelining'),
    cpuProf: values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']),
    pg: values.pg ?? DEFAULT_PG_URL,
    noPg: values['no-pg'] === true,
    noScale: values['no-scale'] === true,
    only: values.only === undefined ? undefined : onlyPattern(values.only),
  };
}

function onlyPattern(raw) {
  try {
    return new RegExp(raw, 'i');
  } catch (err) {
    throw new UsageError(`--only: ${err.message}`);
  }
}

/**
 * The rows to run: all, or those `--only` matches together with the rows they are compared with (baseline,
 * `also`, targets), and theirs in turn.
 */
function selectScenarios(params) {
  if (params.only === undefined) return SCENARIOS;
  const wanted = new Set(SCENARIOS.filter((s) => params.only.test(s.name)).map((s) => s.name));
  if (wanted.size === 0) throw new UsageError(`--only ${params.only.source}: no row matches`);
  const compared = (s) => [
    ...(s.baseline === null ? [] : [s.baseline]),
    ...(s.also ?? []),
    ...(s.targets ?? []).map((t) => t.vs),
  ];
  for (let pass = 0; pass < SCENARIOS.length; pass++) {
    const before = wanted.size;
    for (const s of SCENARIOS) if (wanted.has(s.name)) compared(s).forEach((name) => wanted.add(name));
    if (wanted.size === before) break;
  }
  return SCENARIOS.filter((s) => wanted.has(s.name));
}

// ---------------------------------------------------------------------------------------------------------
// PostgreSQL: a reachability check before the run, fresh schemas for the run, dropped at the end.

const redactUrl = (url) => url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');

/** Connections the pg rows hold at once: the raw child's, and per server process its pool and its LISTEN client. */
// The raw loops, the creation/polling servers (pool 10 + LISTEN each) and the push servers (pool 4 + LISTEN each).
const PG_CONNECTIONS_NEEDED = PG_CONNECTIONS + (1 + PG_REPLICAS) * (10 + 1) + (1 + PG_REPLICAS) * (4 + 1);

/** Where the pg rows run (`url`, one fresh schema name per pg server), or why they are skipped. */
async function planPostgres(params) {
  if (params.noPg) return { skipped: 'disabled with --no-pg' };
  const url = params.pg;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PG_PROBE_TIMEOUT_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query(
      `SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int
         - (SELECT count(*) FROM pg_stat_activity)::int AS free`,
    );
    if (rows[0].free < PG_CONNECTIONS_NEEDED) {
      return {
        skipped: `PostgreSQL at ${redactUrl(url)} has ${rows[0].free} free connections, the rows need ${PG_CONNECTIONS_NEEDED}`,
      };
    }
  } catch (err) {
    const why = err instanceof Error ? err.message || err.code || err.name : String(err);
    return { skipped: `PostgreSQL at ${redactUrl(url)} is unreachable (${why})` };
  } finally {
    await client.end().catch(() => undefined);
  }
  const base = `dmcp_bench_${randomBytes(5).toString('hex')}`;
  return {
    url,
    schemas: {
      'pg-raw': `${base}_raw`,
      'ours-pg1': `${base}_r1`,
      'ours-pg3': `${base}_r3`,
      'ours-pg-push1': `${base}_p1`,
      'ours-pg-push3': `${base}_p3`,
    },
  };
}

/** Drops the run's schemas (after every server has stopped), once; resolves false if that failed. */
function dropSchemas(plan) {
  if (plan?.schemas === undefined) return Promise.resolve(true);
  plan.dropping ??= dropNow(plan);
  return plan.dropping;
}

async function dropNow(plan) {
  const client = new pg.Client({ connectionString: plan.url, connectionTimeoutMillis: PG_PROBE_TIMEOUT_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const names = Object.values(plan.schemas);
    for (const name of names)
      await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(name)} CASCADE`);
    log(`dropped PostgreSQL schemas ${names.join(', ')}`);
    return true;
  } catch (err) {
    log(
      `WARNING: could not drop the PostgreSQL schemas ${Object.values(plan.schemas).join(', ')}: ${err.message}`,
    );
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function postgresReport(plan) {
  if (plan.skipped !== undefined) return { skipped: plan.skipped };
  return {
    url: redactUrl(plan.url),
    schemas: plan.schemas,
    connectionsRaw: PG_CONNECTIONS,
    replicas: PG_REPLICAS,
  };
}

async function startTargets(scenarios, ctx) {
  const keys = [...new Set(scenarios.map((s) => s.server))];
  const started = await Promise.all(keys.map((key) => startServer(key, ctx)));
  const targets = Object.fromEntries(started.map((t) => [t.key, t]));
  for (const key of keys) log(`${key}: ${targets[key].url}  (${SERVERS[key].label})`);
  return targets;
}

/** Setup and pre-flight check of every row: in table order per server, the servers side by side. */
async function prepare(scenarios, targets) {
  const states = new Map();
  const servers = [...new Set(scenarios.map((s) => s.server))];
  await Promise.all(
    servers.map(async (key) => {
      for (const s of scenarios.filter((x) => x.server === key)) {
        const target = targets[s.server];
        states.set(s.name, s.setup === undefined ? undefined : await s.setup(target));
        await verifyScenario(s, target, states.get(s.name));
      }
    }),
  );
  log('pre-flight: every scenario passed its check (HTTP 200 with a JSON-RPC result, or a raw run)');
  return states;
}

async function benchmark(params, scenarios, ctx) {
  if (scenarios.some((s) => s.needs === 'scale')) ctx.scale = await prepareScale(ctx);
  ctx.sleepers = await prepareSleepers(ctx, scenarios);
  const targets = await startTargets(scenarios, ctx);
  if (scenarios.some((s) => s.kind === 'latency')) {
    latencyClient = await startProcess(LATENCY_CLIENT, 'latency-client', ctx);
  }
  const states = await prepare(scenarios, targets);
  await warmUp(scenarios, targets, states, params);
  const samples = await runRounds(scenarios, targets, states, params);
  return summarize(scenarios, samples);
}

/** What the report says about the stored-task rows: sizes and fill times, or why they did not run. */
function scaleReport(params, scenarios, scale) {
  if (params.noScale) return { skipped: 'disabled with --no-scale' };
  if (!scenarios.some((s) => s.needs === 'scale')) return { skipped: 'no stored-task row selected (--only)' };
  if (scale === undefined) return undefined;
  const strip = ({ sample: _sample, ...rest }) => rest;
  return {
    small: strip(scale.small),
    large: strip(scale.large),
    totalMs: scale.totalMs,
    sampled: SCALE_SAMPLE,
  };
}

function packageVersion(name) {
  return JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;
}

function buildReport(params, machine, rows, postgres, scale, sleepers) {
  const {
    help: _help,
    cpuProf: _cpuProf,
    pg: _pg,
    noPg: _noPg,
    noScale: _noScale,
    only,
    ...parameters
  } = params;
  return {
    machine,
    parameters: {
      ...parameters,
      ...(only === undefined ? {} : { only: only.source }),
      host: HOST,
      protocolVersion: PROTOCOL_VERSION,
    },
    loadGenerator: { name: 'autocannon', version: autocannonVersion(), inProcess: true },
    peer: {
      '@modelcontextprotocol/server': packageVersion('@modelcontextprotocol/server'),
      '@modelcontextprotocol/node': packageVersion('@modelcontextprotocol/node'),
    },
    servers: Object.fromEntries(Object.entries(SERVERS).map(([k, v]) => [k, v.label])),
    postgres,
    ...(scale === undefined ? {} : { scale }),
    ...(sleepers === undefined ? {} : { sleepers }),
    scenarios: rows,
  };
}

function reportFailures(rows) {
  const bad = rows.filter((r) => r.non2xx > 0 || r.errors > 0);
  for (const r of bad) log(`WARNING: ${r.name}: ${r.non2xx} non-2xx responses, ${r.errors} errors/timeouts`);
  return bad.length === 0;
}

async function main(argv) {
  const params = parseParams(argv);
  if (params.help) return void console.log(USAGE);
  const machine = machineInfo();
  log(`${params.mode} run: ${describePreset(params)}, pipelining ${params.pipelining}`);
  const selected = selectScenarios(params);
  const plan = selected.some((s) => s.needs === 'pg')
    ? await planPostgres(params)
    : { skipped: 'no PostgreSQL row selected (--only)' };
  pgPlan = plan;
  if (plan.skipped !== undefined) log(`PostgreSQL rows skipped: ${plan.skipped}`);
  else log(`PostgreSQL rows: ${redactUrl(plan.url)}, schemas ${Object.values(plan.schemas).join(', ')}`);
  if (params.noScale) log('stored-task rows skipped: disabled with --no-scale');
  const scenarios = selected.filter(
    (s) => (s.needs !== 'pg' || plan.skipped === undefined) && (s.needs !== 'scale' || !params.noScale),
  );
  const ctx = { workDir: makeWorkDir(), cpuProf: params.cpuProf, pg: plan, started: [] };
  if (params.cpuProf) mkdirSync(params.cpuProf, { recursive: true });
  let rows;
  let dropped;
  try {
    rows = await benchmark(params, scenarios, ctx);
  } finally {
    await stopAll();
    removeWorkDirs();
    dropped = await dropSchemas(plan);
  }
  const report = buildReport(
    params,
    machine,
    rows,
    postgresReport(plan),
    scaleReport(params, selected, ctx.scale),
    ctx.sleepers,
  );
  const md = markdown(report);
  writeResults(report, md);
  console.log(md);
  log(`wrote ${join('bench', 'results', 'latest.json')} and ${join('bench', 'results', 'latest.md')}`);
  if (params.cpuProf) {
    const keys = ctx.started.filter((k) => k.startsWith('ours'));
    log(
      `CPU profiles of our servers: ${keys.map((k) => join(params.cpuProf, `${k}.cpuprofile`)).join(', ')}`,
    );
  }
  if (!reportFailures(rows) || !dropped) process.exitCode = 1;
}

/** The run's PostgreSQL plan, so that a signal can still drop its schemas. */
let pgPlan;

function onSignal(signal) {
  log(`${signal}: stopping servers`);
  stopAll()
    .then(() => dropSchemas(pgPlan))
    .finally(() => process.exit(130));
}

if (process.argv.includes('--latency-client')) {
  serveLatencyClient();
} else if (process.argv.includes('--serve-baseline')) {
  serveBaseline(process.argv.includes('--streams'));
} else {
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', cleanUpNow);
  main(process.argv.slice(2)).catch((err) => {
    log(err instanceof UsageError ? `${err.message}\n${USAGE}` : `error: ${err.message}`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  });
}
