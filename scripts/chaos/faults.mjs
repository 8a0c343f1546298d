// Section 2, fault injection: one `serve` process runs durable tasks under steady traffic while its store goes away.
//   PostgreSQL: the server talks to PostgreSQL through a loopback TCP proxy of the suite, so the suite can
//     terminate exactly the server's backends (pg_terminate_backend on the proxy's upstream ports), refuse new
//     connections, reset every connection, or black-hole the traffic, for a few seconds, then heal.
//   SQLite: another connection holds the write lock (BEGIN IMMEDIATE) for longer than the server's busy timeout.
//   SQLite disk full (fault 'full'): the file lives on a small tmpfs of its own, which the suite fills with a ballast
//     file and empties again (needs permission to mount; otherwise the section is skipped and says why).
// While the store is away the server must answer -32603 with a clear message (never a task handle that was not
// committed), keep answering tools/list and /healthz, and recover by itself once the store is back.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { Agent } from 'node:http';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import {
  CHAOS_TOOLS,
  COMMON_SERVE_FLAGS,
  crashExcerpt,
  httpGet,
  Invariants,
  now,
  percentile,
  pgQuery,
  pgSchema,
  rng as makeRng,
  rpc,
  sleep,
  startProxy,
  startServe,
  viaPort,
} from './lib.mjs';

export const FAULT_INVARIANTS = {
  'clear-errors':
    'while the store is away, failing requests answer -32603 "Task store unavailable: <reason>" (HTTP 500), nothing vaguer',
  'no-phantom-handle':
    'every task handle tools/call returned is in the store (none returned for a failed commit)',
  'bounded-wait':
    'every request sent while the store is away is answered (error or not) within the wait bound (about two busy or connect timeouts), not only once the store is back',
  recovers: 'after each fault a create, get and update succeed again within the bound, without a restart',
  durable: 'every task whose handle was returned ends completed: a store outage does not fail accepted tasks',
  responsive:
    'tools/list and /healthz keep answering while the store is away (with PostgreSQL, within 5 s: they do not touch the store)',
  'no-crash': 'the server process never exits',
};

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const STORE_ERROR = /^Task store unavailable: \S/;

/** Mounts a tmpfs of `sizeMb` at `dir` (unmounted when the scope closes); the reason when that is not allowed. */
function mountSmallFs(scope, dir, sizeMb) {
  mkdirSync(dir, { recursive: true });
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0700`, 'tmpfs', dir], {
    encoding: 'utf8',
  });
  if (r.error !== undefined || r.status !== 0)
    return `mounting a ${sizeMb} MB tmpfs is not permitted here (${(r.stderr || r.error?.message || '').trim()})`;
  scope.defer(() => {
    spawnSync('umount', ['-l', dir]);
  });
  return undefined;
}

/** Writes a ballast file until the filesystem of `path` has no byte left; returns its size. */
function fillDisk(path) {
  const fd = openSync(path, 'w');
  let written = 0;
  try {
    for (const size of [1 << 20, 1 << 12, 1 << 9]) {
      const chunk = Buffer.alloc(size, 0x5a);
      // Bounded: the filesystem is small (tens of MB).
      for (let i = 0; i < 100_000; i++) {
        try {
          written += writeSync(fd, chunk);
        } catch (err) {
          if (err.code === 'ENOSPC') break;
          throw err;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return written;
}

export const FULL_INVARIANTS = {
  ...FAULT_INVARIANTS,
  effective: 'the full disk was felt: writes while it was full answered -32603 SQLITE_FULL',
};

export async function runFaults({ backend, fault, params, scope, seed, pgUrl, progress }) {
  const inv = new Invariants();
  const full = fault === 'full';
  for (const [name, description] of Object.entries(full ? FULL_INVARIANTS : FAULT_INVARIANTS))
    inv.define(name, description);
  const rng = makeRng(seed);
  const started = now();
  const dir = scope.tempDir('durable-mcp-chaos-fault-');
  const logFile = join(dir, 'runs.log');
  writeFileSync(logFile, '');
  const stats = {
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
  };

  let storeArgs;
  let proxy;
  let schema;
  let dbFile;
  if (backend === 'postgres') {
    schema = pgSchema(scope, pgUrl, 'fault');
    proxy = await startProxy(scope, pgUrl);
    storeArgs = [
      '--store',
      viaPort(pgUrl, proxy.port),
      '--pg-schema',
      schema,
      '--pg-pool-size',
      '4',
      '--pg-statement-timeout-ms',
      '5000',
    ];
  } else if (full) {
    const fsDir = join(dir, 'small-fs');
    const why = mountSmallFs(scope, fsDir, params.fullFsMb);
    if (why !== undefined) return { skipped: `skipped: ${why}`, inv: new Invariants(), stats: {} };
    dbFile = join(fsDir, 'tasks.db');
    storeArgs = ['--store', dbFile];
  } else {
    dbFile = join(dir, 'tasks.db');
    storeArgs = ['--store', dbFile];
  }
  const serveArgs = [
    ...COMMON_SERVE_FLAGS,
    ...storeArgs,
    '--tools',
    CHAOS_TOOLS,
    '--lease-ms',
    String(params.leaseMs),
    '--concurrency',
    '4',
    '--log-level',
    'error',
  ];
  const env = { DURABLE_MCP_TEST_LOG: logFile };
  let server = startServe(scope, serveArgs, { env });
  await server.started;
  let url = server.url;
  // A crash is a violation; the server is then started again so that the other faults are still tried.
  stats.crashes = 0;
  let restarting;
  const ensureServer = () => {
    if (!server.dead || scope.closed) return Promise.resolve();
    restarting ??= (async () => {
      stats.crashes += 1;
      inv.fail('no-crash', `the server exited during ${phase}: ${crashExcerpt(server.stderr())}`);
      // The store may still be away (a start-up needs it): try again until it is back.
      for (let attempt = 0; ; attempt++) {
        server = startServe(scope, serveArgs, { env });
        try {
          await server.started;
          break;
        } catch (err) {
          if (attempt >= 60) throw err;
          await sleep(500);
        }
      }
      url = server.url;
      generation += 1;
      restarting = undefined;
    })();
    return restarting;
  };
  // A fresh connection per request: a keep-alive socket the server closes as it wakes from a blocked event loop
  // would otherwise show up as a reset.
  const agent = new Agent({ keepAlive: false });
  let generation = 0;
  const call = async (method, args, options = {}) => {
    const gen = generation;
    const r = await rpc(url, method, args, { agent, timeoutMs: 60_000, ...options });
    return { ...r, gen };
  };
  const netFailures = [];

  // ----- every answer is classified by the phase it was sent in
  let phase = 'baseline';
  const record = (method, r, sentIn) => {
    stats.requests += 1;
    if (sentIn !== 'baseline' && sentIn !== 'recovery' && r.netError === undefined) {
      stats.waitMs.push(r.ms);
      inv.expect(
        'bounded-wait',
        r.ms <= params.waitBoundMs,
        () =>
          `${method} sent during ${sentIn} was answered after ${Math.round(r.ms)} ms (${r.error === undefined ? 'success' : r.error.message})`,
      );
    }
    if (r.netError !== undefined) {
      // Judged at the end: requests cut by a crash of the server they were sent to count as that crash.
      netFailures.push({
        r,
        why: `${method} sent during ${sentIn}: no answer (${r.netError}) after ${Math.round(r.ms)} ms`,
      });
      return 'net';
    }
    if (r.error === undefined && r.badBody === undefined) return 'ok';
    const message = String(r.error?.message ?? r.badBody);
    if (r.error?.code === -32603 && STORE_ERROR.test(message) && r.status === 500) {
      const reason = message.replace('Task store unavailable: ', '').replace(/\(.*$/, '').trim();
      stats.storeErrors[reason] = (stats.storeErrors[reason] ?? 0) + 1;
      if (/SQLITE_BUSY/.test(message)) stats.busyErrors += 1;
      if (/SQLITE_FULL/.test(message)) stats.fullErrors = (stats.fullErrors ?? 0) + 1;
      inv.ok('clear-errors');
      return 'store';
    }
    stats.otherErrors += 1;
    inv.fail(
      'clear-errors',
      `${method} during ${sentIn}: HTTP ${r.status} ${r.error?.code} ${message.slice(0, 200)}`,
    );
    return 'other';
  };

  // ----- steady traffic: tasks with steps and one input, created, polled and answered
  const tasks = [];
  let creating = true;
  let running = true;
  const handles = [];
  const createTask = async (label) => {
    const sentIn = phase;
    const r = await call('tools/call', {
      name: 'chaos_job',
      arguments: { cid: label, steps: 3, inputs: 1, ms: rng.int(50, 200) },
    });
    const kind = record('tools/call', r, sentIn);
    if (kind === 'ok' && r.result?.resultType === 'task') {
      stats.handles += 1;
      const rec = { taskId: r.result.taskId, sentIn, answeredAt: phase, final: undefined };
      handles.push(rec);
      return rec;
    }
    if (kind === 'ok')
      inv.fail(
        'clear-errors',
        `tools/call answered without a task: ${JSON.stringify(r.result).slice(0, 200)}`,
      );
    return undefined;
  };
  const follow = async (rec) => {
    const deadline = now() + 120_000;
    while (running && now() < deadline && !scope.closed) {
      await sleep(100);
      await ensureServer();
      const sentIn = phase;
      const r = await call('tasks/get', { taskId: rec.taskId });
      if (record('tasks/get', r, sentIn) !== 'ok') continue;
      const t = r.result;
      if (TERMINAL.has(t.status)) {
        rec.final = t;
        return;
      }
      if (t.status === 'input_required') {
        const inputResponses = {};
        for (const key of Object.keys(t.inputRequests))
          inputResponses[key] = { action: 'accept', content: { v: 'ok' } };
        const u = await call('tasks/update', { taskId: rec.taskId, inputResponses });
        record('tasks/update', u, sentIn);
      }
    }
  };
  let serial = 0;
  const trafficLoop = async () => {
    while (running && !scope.closed) {
      if (!creating) {
        await sleep(50);
        continue;
      }
      const rec = await createTask(`f${serial++}`);
      if (rec === undefined) {
        await sleep(150);
        continue;
      }
      tasks.push(rec);
      await follow(rec);
    }
  };
  const loops = Array.from({ length: 6 }, () => trafficLoop());

  // ----- responsiveness probes (independent of the store)
  let probing = true;
  const probeLoop = (async () => {
    while (probing && !scope.closed) {
      const sentIn = phase;
      await ensureServer();
      const gen = generation;
      const [list, health] = await Promise.all([
        call('tools/list', {}),
        httpGet(url, '/healthz', { timeoutMs: 60_000, agent }),
      ]);
      if (sentIn !== 'baseline' && sentIn !== 'recovery') {
        stats.listMsDuringFault.push(list.ms);
        for (const [what, r] of [
          ['tools/list', list],
          ['/healthz', health],
        ]) {
          inv.expect(
            'bounded-wait',
            r.netError !== undefined || r.ms <= params.waitBoundMs,
            () => `${what} sent during ${sentIn} was answered after ${Math.round(r.ms)} ms`,
          );
        }
      }
      if (list.netError !== undefined)
        netFailures.push({ r: list, why: `tools/list during ${sentIn}: ${list.netError}` });
      else
        inv.expect(
          'responsive',
          list.result !== undefined,
          () => `tools/list during ${sentIn}: ${list.error?.message}`,
        );
      if (health.netError !== undefined) {
        netFailures.push({ r: { ...health, gen }, why: `/healthz during ${sentIn}: ${health.netError}` });
      } else
        inv.expect('responsive', health.status === 200, () => `/healthz during ${sentIn}: ${health.status}`);
      if (backend === 'postgres') {
        inv.expect(
          'responsive',
          list.ms < 5_000,
          () =>
            `tools/list took ${Math.round(list.ms)} ms during ${sentIn} (bound 5 s: it does not touch the store)`,
        );
      }
      await sleep(100);
    }
  })();

  /** After a fault: a full create → get → update round must succeed again within the bound. */
  const recovery = async (label) => {
    phase = 'recovery';
    const t0 = now();
    while (now() - t0 < params.recoveryBoundMs) {
      await ensureServer();
      const rec = await createTask(`${label}-probe`);
      if (rec !== undefined) {
        const g = await call('tasks/get', { taskId: rec.taskId });
        const u = await call('tasks/update', { taskId: rec.taskId, inputResponses: {} });
        if (g.result !== undefined && u.result !== undefined) {
          stats.recoveryMs.push(now() - t0);
          inv.ok('recovers');
          tasks.push(rec);
          void follow(rec);
          phase = 'baseline';
          return;
        }
      }
      await sleep(100);
    }
    inv.fail(
      'recovers',
      `${label}: no successful create/get/update within ${params.recoveryBoundMs} ms after the store came back`,
    );
    phase = 'baseline';
  };

  /**
   * Probes sent while the store is away, one every 250 ms (at most two outstanding) until `untilMs`: a creation
   * must fail cleanly (or, if it succeeds, be committed). Returns the outstanding probes without waiting for them,
   * so that a probe hanging on the fault cannot stretch the fault itself.
   */
  const outageProbes = async (label, untilMs) => {
    const outstanding = new Set();
    while (now() < untilMs) {
      if (outstanding.size < 2) {
        const sentIn = phase;
        const p = call('tools/call', { name: 'chaos_job', arguments: { cid: `${label}-x`, steps: 1 } }).then(
          (r) => {
            const kind = record('tools/call', r, sentIn);
            if (kind === 'ok' && r.result?.resultType === 'task') {
              stats.handles += 1;
              const rec = { taskId: r.result.taskId, sentIn, answeredAt: phase };
              handles.push(rec);
              tasks.push(rec);
              void follow(rec);
            }
          },
        );
        outstanding.add(p);
        void p.finally(() => outstanding.delete(p));
      }
      await sleep(Math.min(250, Math.max(0, untilMs - now())));
    }
    return { done: Promise.all([...outstanding]) };
  };

  await sleep(1_500);
  if (backend === 'postgres') {
    for (const [i, kind] of params.pgCycles.entries()) {
      progress?.(`fault ${i + 1}/${params.pgCycles.length}: ${kind}`);
      await sleep(rng.int(800, 2_000));
      stats.faults[kind] = (stats.faults[kind] ?? 0) + 1;
      if (kind === 'terminate') {
        // Kill the server's backends a few times in a row while transactions (tasks/cancel of finished tasks,
        // a row-locking no-op) are being started on pooled connections.
        phase = 'terminate';
        const done = tasks.filter((t) => t.final !== undefined).slice(-30);
        for (let burst = 0; burst < 3; burst++) {
          const storm = done.map((t) =>
            call('tasks/cancel', { taskId: t.taskId }).then((r) => record('tasks/cancel', r, 'terminate')),
          );
          await sleep(rng.int(0, 5));
          const rows = await pgQuery(
            pgUrl,
            `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
              WHERE client_addr = '127.0.0.1' AND client_port = ANY($1::int[])`,
            [proxy.upstreamPorts()],
          );
          stats.terminated = (stats.terminated ?? 0) + rows.filter((r) => r.ok).length;
          await Promise.all(storm);
          await sleep(100);
        }
        await (
          await outageProbes(`t${i}`, now() + 300)
        ).done;
      } else {
        phase = kind;
        await proxy.down(kind);
        const probes = await outageProbes(
          `${kind}${i}`,
          now() + (kind === 'blackhole' ? params.blackholeMs : params.outageMs),
        );
        await proxy.up();
        await probes.done;
      }
      await recovery(`${kind} #${i + 1}`);
    }
  } else if (full) {
    for (let i = 0; i < params.fullCycles; i++) {
      progress?.(`fault ${i + 1}/${params.fullCycles}: disk full`);
      await sleep(rng.int(800, 2_000));
      stats.faults.full = (stats.faults.full ?? 0) + 1;
      const ballast = join(dirname(dbFile), `ballast-${i}`);
      stats.ballastBytes = fillDisk(ballast);
      phase = 'full';
      const fullErrorsBefore = stats.fullErrors ?? 0;
      try {
        const probes = await outageProbes(`full${i}`, now() + params.fullHoldMs);
        await probes.done;
      } finally {
        rmSync(ballast, { force: true });
      }
      inv.expect(
        'effective',
        (stats.fullErrors ?? 0) > fullErrorsBefore,
        `disk full #${i + 1}: no request was answered SQLITE_FULL while the disk was full`,
      );
      await sleep(100);
      await recovery(`disk full #${i + 1}`);
    }
  } else {
    for (let i = 0; i < params.busyCycles; i++) {
      progress?.(`fault ${i + 1}/${params.busyCycles}: SQLITE_BUSY`);
      await sleep(rng.int(800, 2_000));
      stats.faults.busy = (stats.faults.busy ?? 0) + 1;
      // A creation batch that meets SQLITE_BUSY is retried row by row, each waiting out the busy timeout: keep
      // the probe to one creation at a time so the fault stays bounded.
      creating = false;
      await sleep(300);
      const locker = new Database(dbFile, { fileMustExist: true });
      locker.pragma('busy_timeout = 10000');
      locker.exec('BEGIN IMMEDIATE');
      phase = 'busy';
      let busyProbes = { done: Promise.resolve() };
      let burst = [];
      try {
        // A burst of creations (one group-commit batch) and then one creation at a time, while the lock is held.
        burst = Array.from({ length: 4 }, (_, n) =>
          call('tools/call', { name: 'chaos_job', arguments: { cid: `busy${i}-burst${n}`, steps: 1 } }).then(
            (r) => {
              if (record('tools/call', r, 'busy') === 'ok' && r.result?.resultType === 'task') {
                stats.handles += 1;
                const rec = { taskId: r.result.taskId, sentIn: 'busy', answeredAt: phase };
                handles.push(rec);
                tasks.push(rec);
                void follow(rec);
              }
            },
          ),
        );
        const holdUntil = now() + params.busyHoldMs;
        await sleep(200);
        busyProbes = await outageProbes(`busy${i}`, holdUntil - 6_000);
        await sleep(holdUntil - now());
      } finally {
        locker.exec('ROLLBACK');
        locker.close();
      }
      await Promise.all([busyProbes.done, ...burst]);
      // Answers to requests sent while the lock was held may still arrive now; they count for the busy phase.
      await sleep(100);
      await recovery(`SQLITE_BUSY #${i + 1}`);
      creating = true;
    }
  }

  // ----- settle: stop creating; every task with a handle must complete
  creating = false;
  const settleStart = now();
  while (now() - settleStart < 60_000 && tasks.some((t) => t.final === undefined)) {
    await ensureServer();
    await sleep(100);
  }
  running = false;
  probing = false;
  await Promise.all([...loops, probeLoop]);
  await ensureServer();
  inv.ok('no-crash');
  for (const { r, why } of netFailures) {
    if (r.gen < generation) stats.cutByCrash = (stats.cutByCrash ?? 0) + 1;
    else inv.fail('responsive', why);
  }

  // ----- the store's view
  let rows;
  if (backend === 'postgres') {
    rows = await pgQuery(pgUrl, `SELECT id, status, error FROM ${pg.escapeIdentifier(schema)}.tasks`);
  } else {
    const db = new Database(dbFile, { fileMustExist: true });
    try {
      rows = db.prepare('SELECT id, status, error FROM tasks').all();
    } finally {
      db.close();
    }
  }
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const h of handles) {
    inv.expect(
      'no-phantom-handle',
      byId.has(h.taskId),
      `tools/call sent during ${h.sentIn} returned ${h.taskId}, which is not in the store`,
    );
  }
  for (const t of tasks) {
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
  stats.recoveryP100 = Math.max(0, ...stats.recoveryMs);
  stats.waitP99 = percentile(stats.waitMs, 99);
  stats.waitMax = stats.waitMs.length === 0 ? undefined : Math.max(...stats.waitMs);
  delete stats.waitMs;
  stats.listP99DuringFault = percentile(stats.listMsDuringFault, 99);
  stats.listMaxDuringFault =
    stats.listMsDuringFault.length === 0 ? undefined : Math.max(...stats.listMsDuringFault);
  const faultCount = Object.values(stats.faults).reduce((a, b) => a + b, 0);
  stats.summaryLine = `${faultCount} faults (${Object.entries(stats.faults)
    .map(([k, n]) => `${k} ${n}`)
    .join(
      ', ',
    )}), ${stats.requests} requests, ${Object.values(stats.storeErrors).reduce((a, b) => a + b, 0)} clean -32603, ${stats.tasksCompleted}/${tasks.length} tasks completed, recovery ≤ ${stats.recoveryP100} ms`;
  stats.durationMs = now() - started;
  delete stats.listMsDuringFault;
  return { inv, stats };
}
