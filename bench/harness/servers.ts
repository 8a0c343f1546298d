// The servers under test and the baselines' child processes: how each is started, and starting one (all its
// replicas). Each runs in its own child process. An HTTP server prints `listening on http://127.0.0.1:PORT/…`;
// an `ipc` child sends `{ type: 'ready' }` and then answers `{ op, seconds }` messages with measurements.
import { join } from 'node:path';
import {
  BENCH_TOOLS,
  CHILD,
  MEM_PROBE_FLAGS,
  PEER_TOOLS_ENV,
  EVENT_TASKS,
  PG_CONNECTIONS,
  PG_REPLICAS,
  PG_SCALE_POOL,
  RETRYING_TASKS,
  SATURATED_TASKS,
  SCALE_FILES,
  SCALE_LARGE,
  SCALE_SMALL,
  SLEEP_COUNTS,
  SLEEP_FILES,
  TSX_FLAGS,
  UNLIMITED,
  WAITING_TASKS,
  type StoreSize,
} from '../config.js';
import { fmtInt } from '../format.js';
import { SATURATED_KEY } from '../tools.mjs';
import type { Target } from '../types.js';
import { listedTools } from './demo-tools.js';
import { GATEWAY_SERVERS } from './gateway-servers.js';
import type { PgRun, PgServerKey } from './postgres.js';
import { startProcess, stopChild } from './processes.js';
import { cpuProfFlags, serveCommand, serveStore, type RunContext, type ServerSpec } from './server-spec.js';

/** `node --import tsx bench/children/push-server.ts ARGS…`; `key` names its CPU profile. */
const pushServerCommand = (ctx: RunContext, key: string, args: string[]) => [
  ...cpuProfFlags(ctx, key),
  ...TSX_FLAGS,
  CHILD.pushServer,
  ...args,
];

/** The run's PostgreSQL (servers that need it are started only when it is there). */
export function pgRun(ctx: RunContext): PgRun {
  if (ctx.pg.skipped !== undefined) throw new Error(`no PostgreSQL for this row: ${ctx.pg.skipped}`);
  return ctx.pg;
}

const pgSchema = (ctx: RunContext, key: PgServerKey) => pgRun(ctx).schemas[key];

/** A PostgreSQL replica: its own schema per row, no worker (the rows measure creation and reads). */
const servePg = (ctx: RunContext, name: string, schema: string) =>
  serveStore(ctx, name, pgRun(ctx).url, [
    '--pg-schema',
    schema,
    '--tools',
    BENCH_TOOLS,
    '--concurrency',
    '0',
    ...UNLIMITED,
  ]);

/** Environment of a server whose memory the harness probes (see bench/mem-probe.mjs). */
export const memProbeEnv = (ctx: RunContext, name: string): Record<string, string> => ({
  DURABLE_MCP_BENCH_MEM_PROBE: join(ctx.workDir, `${name}.memory.json`),
});

/** The operator list rows' callers: the anonymous caller is an operator of every tenant. */
const DEV_OPERATOR = '--dev-operator';

/** Our server on one of the stored-task scale files (filled before the servers start), also an operator's. */
const serveScale = (size: StoreSize, count: number): ServerSpec => ({
  label:
    `the same with ${DEV_OPERATOR} on a SQLite file holding ${fmtInt(count)} completed tasks ` +
    '(bench/children/scale-tasks.ts)',
  scale: size,
  command: (ctx, key) =>
    serveCommand(ctx, key, SCALE_FILES[size], ['--tools', BENCH_TOOLS, DEV_OPERATOR, ...UNLIMITED]),
});

/** Our server on one of the PostgreSQL stored-task schemas (filled before the servers start), no worker. */
const servePgScale = (key: 'ours-pg-ops-small' | 'ours-pg-ops-large', count: number): ServerSpec => ({
  label:
    `node bin/durable-mcp.js serve --store postgres://… --pg-schema <fresh> --tools bench/tools.mjs --concurrency 0 ` +
    `--pg-pool-size ${PG_SCALE_POOL} ${DEV_OPERATOR} --no-audit --tasks-get-rate 0 --max-active-tasks 0 ` +
    `--max-stored-tasks 0 (a schema holding ${fmtInt(count)} completed tasks, bench/harness/pg-fill.ts)`,
  pg: true,
  command: (ctx, name) =>
    serveStore(ctx, name, pgRun(ctx).url, [
      '--pg-schema',
      pgSchema(ctx, key),
      '--tools',
      BENCH_TOOLS,
      '--concurrency',
      '0',
      '--pg-pool-size',
      String(PG_SCALE_POOL),
      DEV_OPERATOR,
      ...UNLIMITED,
    ]),
});

/**
 * A server on one of the sleeping-task files, under the memory probe, with its worker (the default one: it must wake
 * the sample tasks of the lateness rows). One principal owns every sleeping task: the per-principal cap is off.
 */
const serveSleepers = (size: StoreSize): ServerSpec => ({
  label:
    `node --expose-gc --import bench/mem-probe.mjs bin/durable-mcp.js serve --tools bench/tools.mjs --no-audit ` +
    `--tasks-get-rate 0 --max-active-tasks 0 --max-stored-tasks 0 (default worker; own SQLite file holding ` +
    `${fmtInt(SLEEP_COUNTS[size])} sleeping bench_sleep tasks, bench/children/scale-tasks.ts)`,
  store: SLEEP_FILES[size],
  sleepers: size,
  command: (ctx, name) => [
    ...MEM_PROBE_FLAGS,
    ...serveCommand(ctx, name, SLEEP_FILES[size], ['--tools', BENCH_TOOLS, ...UNLIMITED]),
  ],
  env: memProbeEnv,
});

/** `serve --tools bench/tools.mjs` on its own SQLite file, with extra flags. */
const serveBenchTools = (key: string, store: string, label: string, flags: string[]): ServerSpec => ({
  label,
  store,
  command: (ctx) => serveCommand(ctx, key, store, ['--tools', BENCH_TOOLS, ...flags]),
});

const PG_SERVERS: Record<string, ServerSpec> = {
  'pg-raw': {
    label: `raw pg (node-postgres) in a child process: ${PG_CONNECTIONS} connections, named statements, a task-shaped table in its own schema`,
    ipc: true,
    pg: true,
    command: (ctx) => [
      ...TSX_FLAGS,
      CHILD.pgBaseline,
      pgRun(ctx).url,
      pgSchema(ctx, 'pg-raw'),
      String(PG_CONNECTIONS),
    ],
  },
  'ours-pg1': {
    label:
      'node bin/durable-mcp.js serve --store postgres://… --pg-schema <fresh> --tools bench/tools.mjs --concurrency 0 ' +
      '--no-audit --tasks-get-rate 0 --max-active-tasks 0 --max-stored-tasks 0 (one process)',
    pg: true,
    command: (ctx, name) => servePg(ctx, name, pgSchema(ctx, 'ours-pg1')),
  },
  // Push latency on PostgreSQL: the push server on a fresh schema, 1 process or PG_REPLICAS processes (replicas: a
  // change committed on one reaches the subscribers of another through LISTEN/NOTIFY).
  'ours-pg-push1': {
    label:
      'node --import tsx bench/children/push-server.ts postgres://… <fresh schema> (one process, default worker)',
    pg: true,
    command: (ctx, name) => pushServerCommand(ctx, name, [pgRun(ctx).url, pgSchema(ctx, 'ours-pg-push1')]),
  },
  'ours-pg-push3': {
    label: `the same, ${PG_REPLICAS} processes on one fresh schema; streams and answers spread over them round-robin`,
    pg: true,
    replicas: PG_REPLICAS,
    command: (ctx, name) => pushServerCommand(ctx, name, [pgRun(ctx).url, pgSchema(ctx, 'ours-pg-push3')]),
  },
  'ours-pg3': {
    label: `the same, ${PG_REPLICAS} processes on one fresh schema; the load is spread over them round-robin`,
    pg: true,
    replicas: PG_REPLICAS,
    command: (ctx, name) => servePg(ctx, name, pgSchema(ctx, 'ours-pg3')),
  },
  'ours-pg-ops-small': servePgScale('ours-pg-ops-small', SCALE_SMALL),
  'ours-pg-ops-large': servePgScale('ours-pg-ops-large', SCALE_LARGE),
};

const SQLITE_TASK_SERVERS: Record<string, ServerSpec> = {
  // One anonymous principal creates faster than the worker drains: the per-principal cap would answer 429.
  'ours-tasks': serveBenchTools(
    'ours-tasks',
    'bench-tasks.db',
    'node bin/durable-mcp.js serve --tools bench/tools.mjs --max-active-tasks 0 --max-stored-tasks 0 (default worker concurrency 8; own SQLite file)',
    ['--max-active-tasks', '0', '--max-stored-tasks', '0'],
  ),
  // The benchmark is one anonymous principal: the per-principal tasks/get limit (default 20/s) would answer
  // almost every poll with 429, so it is set far above any reachable rate (the limiter still runs). The
  // setup creates as many tasks as the default cap on unfinished tasks per principal, so the cap is off.
  'ours-poll': serveBenchTools(
    'ours-poll',
    'bench-poll.db',
    'node bin/durable-mcp.js serve --tools bench/tools.mjs --tasks-get-rate 1000000 --max-active-tasks 0 --max-stored-tasks 0 ' +
      '(own SQLite file)',
    ['--tasks-get-rate', '1000000', '--max-active-tasks', '0', '--max-stored-tasks', '0'],
  ),
  // Its queue grows without bound by design, so the cap on unfinished tasks per principal is off.
  'ours-park': serveBenchTools(
    'ours-park',
    'bench-park.db',
    'node bin/durable-mcp.js serve --tools bench/tools.mjs --concurrency 1 --max-active-tasks 0 --max-stored-tasks 0 (one ' +
      'parked task holds the only worker slot, so the worker runs nothing; own SQLite file)',
    ['--concurrency', '1', '--max-active-tasks', '0', '--max-stored-tasks', '0'],
  ),
  // Creation next to WAITING_TASKS tasks that wait for input: the flags of ours-tasks (the row it is compared with).
  'ours-wait': serveBenchTools(
    'ours-wait',
    'bench-wait.db',
    'node bin/durable-mcp.js serve --tools bench/tools.mjs --max-active-tasks 0 --max-stored-tasks 0 (default worker; own SQLite ' +
      `file with ${fmtInt(WAITING_TASKS)} bench_input tasks waiting for input)`,
    ['--max-active-tasks', '0', '--max-stored-tasks', '0'],
  ),
  // Creation next to RETRYING_TASKS tasks in retry backoff: the flags of ours-tasks (the row it is compared with).
  'ours-retry': serveBenchTools(
    'ours-retry',
    'bench-retry.db',
    'node bin/durable-mcp.js serve --tools bench/tools.mjs --max-active-tasks 0 --max-stored-tasks 0 (default worker; own SQLite ' +
      `file with ${fmtInt(RETRYING_TASKS)} bench_retry tasks waiting to retry a failed step)`,
    ['--max-active-tasks', '0', '--max-stored-tasks', '0'],
  ),
  // Creation next to EVENT_TASKS tasks waiting for an event: the flags of ours-tasks (the row it is compared with).
  'ours-events': serveBenchTools(
    'ours-events',
    'bench-events.db',
    'node bin/durable-mcp.js serve --tools bench/tools.mjs --max-active-tasks 0 --max-stored-tasks 0 (default worker; own SQLite ' +
      `file with ${fmtInt(EVENT_TASKS)} bench_event tasks waiting for an event)`,
    ['--max-active-tasks', '0', '--max-stored-tasks', '0'],
  ),
  // Creation next to SATURATED_TASKS tasks parked behind a full key: the flags of ours-tasks, and one worker slot
  // more, which the run holding the key's slot takes, so that the created tasks get as many as on ours-tasks.
  'ours-saturated': serveBenchTools(
    'ours-saturated',
    'bench-saturated.db',
    'node bin/durable-mcp.js serve --tools bench/tools.mjs --concurrency 9 --max-active-tasks 0 --max-stored-tasks 0 ' +
      `(own SQLite file with one bench_hold run holding the only slot of key "${SATURATED_KEY}" and ` +
      `${fmtInt(SATURATED_TASKS)} bench_queued tasks parked behind it)`,
    ['--concurrency', '9', '--max-active-tasks', '0', '--max-stored-tasks', '0'],
  ),
};

export const SERVERS: Record<string, ServerSpec> = {
  baseline: {
    label: 'bare node:http: read body, JSON.parse, JSON-RPC reply echoing the id',
    command: () => [...TSX_FLAGS, CHILD.baselineServer],
  },
  peer: {
    label:
      'official TypeScript SDK v2 (@modelcontextprotocol/server + @modelcontextprotocol/node): createMcpHandler ' +
      "with a per-request McpServer (legacy: 'reject'), toNodeHandler on node:http, the demo tool list (bench/children/sdk-peer.ts)",
    command: () => [...TSX_FLAGS, CHILD.sdkPeer],
    env: () => ({ [PEER_TOOLS_ENV]: JSON.stringify(listedTools()) }),
  },
  'baseline-stream': {
    label:
      'bare node:http holding each POST open as an SSE stream (one notifications/tasks event per requested taskId), ' +
      'under the memory probe',
    command: () => [...MEM_PROBE_FLAGS, ...TSX_FLAGS, CHILD.baselineServer, '--streams'],
    env: memProbeEnv,
  },
  sqlite: {
    label: 'raw better-sqlite3 in a child process: WAL, synchronous=FULL, a task-shaped table in a temp file',
    ipc: true,
    command: (ctx) => [...TSX_FLAGS, CHILD.sqliteBaseline, join(ctx.workDir, 'raw.db')],
  },
  ours: {
    label: 'node bin/durable-mcp.js serve --tools demo --no-fallback (SQLite store in a temp dir)',
    // No facade tools for clients without the tasks extension: it lists the same tools as the peer.
    command: (ctx) => serveCommand(ctx, 'ours', 'tasks.db', ['--tools', 'demo', '--no-fallback']),
  },
  ...SQLITE_TASK_SERVERS,
  // Push latency and its tasks/get baseline: the runtime embedded through the public API (the same store,
  // extension, worker and HTTP handler as serve, default worker), plus a commit clock: the push server
  // records the monotonic time of each timed transition's commit, read by the first listener of the change feed.
  'ours-push': {
    label:
      'node --import tsx bench/children/push-server.ts (createDurableMcp + createHttpHandler over bench/tools.mjs, ' +
      'default worker, no get rate limit; own SQLite file; GET /bench/commits serves commit times)',
    command: (ctx, name) => pushServerCommand(ctx, name, [join(ctx.workDir, 'bench-push.db')]),
  },
  // Memory per subscription: the default worker runs the watched bench_input tasks up to their input.
  'ours-subs': {
    label:
      'node --expose-gc --import bench/mem-probe.mjs bin/durable-mcp.js serve --tools bench/tools.mjs --no-audit ' +
      '--tasks-get-rate 0 --max-active-tasks 0 --max-stored-tasks 0 (own SQLite file)',
    command: (ctx) => [
      ...MEM_PROBE_FLAGS,
      ...serveCommand(ctx, 'ours-subs', 'bench-subs.db', ['--tools', BENCH_TOOLS, ...UNLIMITED]),
    ],
    env: memProbeEnv,
  },
  'ours-sleep-small': serveSleepers('small'),
  'ours-sleep-large': serveSleepers('large'),
  'ours-small': serveScale('small', SCALE_SMALL),
  'ours-large': serveScale('large', SCALE_LARGE),
  ...PG_SERVERS,
  ...GATEWAY_SERVERS,
};

/**
 * Starts a server's process, or its `replicas` processes (named `<key>-1`, `<key>-2`, …) together; the target's
 * `url` and `child` are the first one's, `urls` and `children` all of them. A server in front of another is handed
 * that one's URL (`upstreamUrl`).
 */
export async function startServer(key: string, ctx: RunContext, upstreamUrl?: string): Promise<Target> {
  const server = SERVERS[key]!;
  const n = server.replicas ?? 1;
  const names = Array.from({ length: n }, (_, i) => (n === 1 ? key : `${key}-${i + 1}`));
  ctx.started.push(...names);
  const serverCtx = upstreamUrl === undefined ? ctx : { ...ctx, upstreamUrl };
  const settled = await Promise.allSettled(names.map((name) => startProcess(server, name, serverCtx)));
  const started = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed !== undefined) {
    // The replicas that did start go too: the rows of this server fail, the run goes on without it.
    await Promise.all(started.map((t) => stopChild(t.child)));
    throw failed.reason;
  }
  const target: Target = {
    ...started[0]!,
    key,
    children: started.map((t) => t.child),
    urls: started.map((t) => t.url),
  };
  if (server.store !== undefined) target.store = join(ctx.workDir, server.store);
  if (server.env === memProbeEnv) target.memoryFile = memProbeEnv(ctx, key).DURABLE_MCP_BENCH_MEM_PROBE;
  if (server.scale !== undefined) target.scale = ctx.scale![server.scale];
  return target;
}
