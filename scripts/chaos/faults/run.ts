// Section 2, fault injection: one `serve` process runs durable tasks under steady traffic while its store goes away.
//   PostgreSQL: the server talks to PostgreSQL through a loopback TCP proxy of the suite, so the suite can
//     terminate exactly the server's backends (pg_terminate_backend on the proxy's upstream ports), refuse new
//     connections, reset every connection, or black-hole the traffic, for a few seconds, then heal.
//   SQLite: another connection holds the write lock (BEGIN IMMEDIATE) for longer than the server's busy timeout.
//   SQLite disk full (fault 'full'): the file lives on a small tmpfs of its own, which the suite fills with a ballast
//     file and empties again (needs permission to mount; otherwise the section is skipped and says why).
// While the store is away the server must answer -32603 with a clear message (never a task handle that was not
// committed), keep answering tools/list and /healthz, and recover by itself once the store is back.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Invariants } from '../harness/invariants.js';
import { CHAOS_TOOLS, COMMON_SERVE_FLAGS } from '../harness/paths.js';
import { pgQuery, pgSchema, pgTable, viaPort } from '../harness/postgres.js';
import { startProxy, type Proxy } from '../harness/proxy.js';
import { rng as makeRng } from '../harness/random.js';
import { now, sleep } from '../harness/time.js';
import { percentile } from '../stats.js';
import type { FaultParams, SectionContext, SectionResult } from '../types.js';
import { busyCycles, diskFullCycles, postgresCycles } from './cycles.js';
import { mountSmallFs } from './disk.js';
import { FaultRun, type FaultStats } from './fault-run.js';
import { FAULT_INVARIANTS, FULL_INVARIANTS } from './invariants.js';
import { probeLoop, trafficLoop } from './traffic.js';

export interface FaultOptions extends SectionContext {
  backend: 'sqlite' | 'postgres';
  fault?: 'full';
  params: FaultParams;
}

/** Where the server's store is and how it reaches it; the reason when the section cannot run here. */
type StoreSetup =
  | { skipped: string }
  | { skipped?: undefined; storeArgs: string[]; proxy?: Proxy; schema?: string; dbFile?: string };

async function setUpStore(
  { backend, fault, params, scope, pgUrl }: FaultOptions,
  dir: string,
): Promise<StoreSetup> {
  if (backend === 'postgres') {
    const schema = pgSchema(scope, pgUrl, 'fault');
    const proxy = await startProxy(scope, pgUrl);
    const storeArgs = ['--store', viaPort(pgUrl, proxy.port), '--pg-schema', schema, '--pg-pool-size', '4'];
    return { storeArgs: [...storeArgs, '--pg-statement-timeout-ms', '5000'], proxy, schema };
  }
  if (fault === 'full') {
    const fsDir = join(dir, 'small-fs');
    const why = mountSmallFs(scope, fsDir, params.fullFsMb);
    if (why !== undefined) return { skipped: `skipped: ${why}` };
    const dbFile = join(fsDir, 'tasks.db');
    return { storeArgs: ['--store', dbFile], dbFile };
  }
  const dbFile = join(dir, 'tasks.db');
  return { storeArgs: ['--store', dbFile], dbFile };
}

function newFaultStats(): FaultStats {
  return {
    faults: {},
    requests: 0,
    storeErrors: {},
    otherErrors: 0,
    handles: 0,
    tasksCompleted: 0,
    tasksFailed: 0,
    recoveryMs: [],
    listMsDuringFault: [],
    busyErrors: 0,
    waitMs: [],
    crashes: 0,
  };
}

export async function runFaults(options: FaultOptions): Promise<SectionResult> {
  const { backend, fault, params, scope, seed, pgUrl, progress } = options;
  const inv = Invariants.of(fault === 'full' ? FULL_INVARIANTS : FAULT_INVARIANTS);
  const rng = makeRng(seed);
  const started = now();
  const dir = scope.tempDir('durable-mcp-chaos-fault-');
  const logFile = join(dir, 'runs.log');
  writeFileSync(logFile, '');
  const stats = newFaultStats();
  const store = await setUpStore(options, dir);
  if (store.skipped !== undefined) return { skipped: store.skipped, inv: new Invariants(), stats: {} };
  const serveArgs = [
    ...COMMON_SERVE_FLAGS,
    ...store.storeArgs,
    ...[
      '--tools',
      CHAOS_TOOLS,
      '--lease-ms',
      String(params.leaseMs),
      '--concurrency',
      '4',
      '--log-level',
      'error',
    ],
  ];
  const f = new FaultRun(scope, params, rng, inv, stats, serveArgs, { DURABLE_MCP_TEST_LOG: logFile });
  await f.start();
  const loops = Array.from({ length: 6 }, () => trafficLoop(f));
  let probing = true;
  const probes = probeLoop(f, backend === 'postgres', () => probing);

  await sleep(1_500);
  if (backend === 'postgres') await postgresCycles(f, pgUrl, store.proxy as Proxy, progress);
  else if (fault === 'full') await diskFullCycles(f, store.dbFile as string, progress);
  else await busyCycles(f, store.dbFile as string, progress);

  // Settle: stop creating; every task with a handle must complete.
  f.creating = false;
  const settleStart = now();
  while (now() - settleStart < 60_000 && f.tasks.some((t) => t.final === undefined)) {
    await f.ensureServer();
    await sleep(100);
  }
  f.running = false;
  probing = false;
  await Promise.all([...loops, probes]);
  await f.ensureServer();
  inv.ok('no-crash');
  for (const { r, why } of f.netFailures) {
    if (r.gen < f.generation) stats.cutByCrash = (stats.cutByCrash ?? 0) + 1;
    else inv.fail('responsive', why);
  }
  await judgeStore(
    f,
    store.schema === undefined ? { dbFile: store.dbFile as string } : { pgUrl, schema: store.schema },
  );
  summarise(stats, f.tasks.length);
  stats.durationMs = now() - started;
  delete stats.listMsDuringFault;
  return { inv, stats };
}

type Row = { id: string; status: string; error: string | null };

/** The store's view: every handle returned is there, every task with a handle completed. */
async function judgeStore(
  f: FaultRun,
  at: { dbFile: string } | { pgUrl: string; schema: string },
): Promise<void> {
  const { inv, stats } = f;
  let rows: Row[];
  if ('pgUrl' in at) {
    rows = await pgQuery<Row>(at.pgUrl, `SELECT id, status, error FROM ${pgTable(at.schema, 'tasks')}`);
  } else {
    const db = new Database(at.dbFile, { fileMustExist: true });
    try {
      rows = db.prepare('SELECT id, status, error FROM tasks').all() as Row[];
    } finally {
      db.close();
    }
  }
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const h of f.handles) {
    inv.expect(
      'no-phantom-handle',
      byId.has(h.taskId),
      `tools/call sent during ${h.sentIn} returned ${h.taskId}, which is not in the store`,
    );
  }
  for (const t of f.tasks) {
    const row = byId.get(t.taskId);
    if (row === undefined) continue;
    if (row.status === 'completed') stats.tasksCompleted += 1;
    if (row.status === 'failed') stats.tasksFailed += 1;
    inv.expect(
      'durable',
      row.status === 'completed',
      () =>
        `task ${t.taskId} (created during ${t.sentIn}) ended ${row.status}${row.error === null ? '' : `: ${row.error}`}`,
    );
  }
}

function summarise(stats: FaultStats, tasks: number): void {
  const waitMs = stats.waitMs ?? [];
  const listMs = stats.listMsDuringFault ?? [];
  stats.recoveryP100 = Math.max(0, ...stats.recoveryMs);
  stats.waitP99 = percentile(waitMs, 99);
  stats.waitMax = waitMs.length === 0 ? undefined : Math.max(...waitMs);
  delete stats.waitMs;
  stats.listP99DuringFault = percentile(listMs, 99);
  stats.listMaxDuringFault = listMs.length === 0 ? undefined : Math.max(...listMs);
  const faultCount = Object.values(stats.faults).reduce((a, b) => a + b, 0);
  const faults = Object.entries(stats.faults)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const clean = Object.values(stats.storeErrors).reduce((a, b) => a + b, 0);
  stats.summaryLine = `${faultCount} faults (${faults}), ${stats.requests} requests, ${clean} clean -32603, ${stats.tasksCompleted}/${tasks} tasks completed, recovery ≤ ${stats.recoveryP100} ms`;
}
