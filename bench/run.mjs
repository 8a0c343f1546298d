// Benchmark harness: interleaved rounds of `durable-mcp serve` (autocannon) next to baselines measured in the same
// run: a bare node:http JSON-RPC echo, and raw better-sqlite3 inserts and selects (bench/sqlite-baseline.mjs).
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';

const SELF = fileURLToPath(import.meta.url);
const BENCH_DIR = dirname(SELF);
const ROOT = resolve(BENCH_DIR, '..');
const RESULTS_DIR = join(BENCH_DIR, 'results');
const SQLITE_BASELINE = join(BENCH_DIR, 'sqlite-baseline.mjs');
const BENCH_TOOLS = join(BENCH_DIR, 'tools.mjs');
const HOST = '127.0.0.1';
const PROTOCOL_VERSION = '2026-07-28';
const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;
/** How long the worker may take to finish the tasks a creation run left queued before the harness gives up. */
const DRAIN_TIMEOUT_MS = 60_000;
/** Tasks created before the tasks/get row, and how many of them one autocannon run rotates through. */
const POLL_TASKS = 1_000;
const POLL_ROTATION = 20;

const PRESETS = {
  default: { duration: 3, rounds: 5, warmup: 2, connections: 50, pipelining: 1 },
  quick: { duration: 1, rounds: 3, warmup: 1, connections: 50, pipelining: 1 },
};

const USAGE = `usage: npm run bench -- [flags]
  --quick              smoke run (~36 s): ${describePreset(PRESETS.quick)}
  --duration SEC       seconds per measured run (default ${PRESETS.default.duration})
  --rounds N           interleaved rounds per scenario (default ${PRESETS.default.rounds})
  --warmup SEC         discarded warm-up run per scenario before the rounds (default ${PRESETS.default.warmup}; 0 skips)
  --connections N      concurrent keep-alive connections (default ${PRESETS.default.connections})
  --pipelining N       requests in flight per connection (default ${PRESETS.default.pipelining})
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
    join(ctx.workDir, store),
    ...args,
  ];
}

const SERVERS = {
  baseline: {
    label: 'bare node:http: read body, JSON.parse, JSON-RPC reply echoing the id',
    command: () => [SELF, '--serve-baseline'],
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

const RAW_INSERT = 'raw better-sqlite3 insert (FULL sync)';

const SCENARIOS = [
  // The baseline receives byte-for-byte the same request as `ours tools/call echo`.
  { name: 'baseline echo', server: 'baseline', baseline: null, request: callEcho },
  {
    name: 'ours tools/list',
    server: 'ours',
    baseline: 'baseline echo',
    request: () => mcpRequest('tools/list'),
  },
  { name: 'ours tools/call echo', server: 'ours', baseline: 'baseline echo', request: callEcho },
  // One row INSERT per autocommit transaction (one fsync each), back to back on one thread.
  { name: RAW_INSERT, server: 'sqlite', baseline: null, run: rawSqlite('insert') },
  // tools/call of a task-only tool: one durable task per request; the worker runs each (claim + finish).
  {
    name: 'ours task creation over HTTP',
    server: 'ours-tasks',
    baseline: RAW_INSERT,
    request: () => createTask('bench_task'),
    verify: verifyTaskCreated,
    settle: drainWorker,
  },
  // The same creation path with the worker out of the way: what group-committed creation alone costs.
  {
    name: 'ours task creation, worker parked',
    server: 'ours-park',
    baseline: RAW_INSERT,
    request: () => createTask('bench_park'),
    verify: verifyTaskCreated,
  },
  { name: 'raw better-sqlite3 point select', server: 'sqlite', baseline: null, run: rawSqlite('select') },
  {
    name: 'ours tasks/get polling',
    server: 'ours-poll',
    baseline: 'baseline echo',
    setup: createPollTasks,
    request: pollTasks,
    verify: verifyPolledTask,
  },
];

/** A measurement run by the raw SQLite child: `op` back to back for `seconds`. */
function rawSqlite(op) {
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
  const got = await send(target, getTask(created.taskId));
  const miss = expectJsonRpcResult(got.status, got.text);
  if (miss !== undefined) return `tasks/get ${created.taskId}: ${miss}`;
  if (JSON.parse(got.text).result.taskId !== created.taskId)
    return `tasks/get answered another task: ${got.text}`;
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
// Baseline server (child-process mode of this same file).

function serveBaseline() {
  const server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => answerBaseline(res, Buffer.concat(chunks).toString('utf8')));
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

function sendBaseline(res, status, payload) {
  const body = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

// ---------------------------------------------------------------------------------------------------------
// Child process management.

const children = new Set();

async function startServer(key, ctx) {
  const server = SERVERS[key];
  // stderr goes to a file, not through the harness: our server writes an audit line per task creation there,
  // and reading those would cost the load generator's CPU.
  const errPath = join(ctx.workDir, `${key}.stderr.log`);
  const errFd = openSync(errPath, 'w');
  let child;
  try {
    child = spawn(process.execPath, server.command(ctx), {
      cwd: ROOT,
      stdio: server.ipc ? ['ignore', 'ignore', errFd, 'ipc'] : ['ignore', 'pipe', errFd],
    });
  } finally {
    closeSync(errFd);
  }
  children.add(child);
  child.on('exit', () => children.delete(child));
  const target = await waitForStart(key, child, server.ipc === true, errPath);
  if (server.store !== undefined) target.store = join(ctx.workDir, server.store);
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
          : fail(`sent ${JSON.stringify(msg)} instead of ready`),
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
    child.send(message);
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

/** Sends one request (autocannon options shape) with fetch. */
async function send(target, req) {
  const res = await fetch(new URL(req.path ?? '/', target.url), {
    method: req.method,
    headers: req.headers,
    body: req.body,
  });
  return { status: res.status, text: await res.text() };
}

async function verifyScenario(scenario, target, state) {
  let problem;
  if (scenario.run !== undefined) {
    const sample = await scenario.run(target, state, 0.1);
    if (!(sample.ok > 0)) problem = `no operation completed in 0.1 s: ${JSON.stringify(sample)}`;
  } else {
    const res = await send(target, scenario.request(target, state));
    problem = await (scenario.verify ?? expectJsonRpcResult)(res.status, res.text, target);
  }
  if (problem !== undefined) {
    throw new Error(`scenario "${scenario.name}" failed its pre-flight check: ${problem}`);
  }
}

async function measure(scenario, target, state, params, duration) {
  if (scenario.run !== undefined) return scenario.run(target, state, duration);
  // The server's CPU time over the run and its settle step (the worker finishing the run's tasks).
  const cpuBefore = processCpuMs(target.child.pid);
  const sample = await measureHttp(scenario, target, state, params, duration);
  if (scenario.settle !== undefined) Object.assign(sample, await scenario.settle(target, state));
  const cpuAfter = processCpuMs(target.child.pid);
  sample.cpuUs =
    cpuBefore === undefined || cpuAfter === undefined || sample.ok === 0
      ? null
      : Math.round(((cpuAfter - cpuBefore) * 1000 * 10) / sample.ok) / 10;
  return sample;
}

const CLOCK_TICKS = (() => {
  const out = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(out.stdout?.trim());
  return Number.isInteger(n) && n > 0 ? n : 100;
})();

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

async function measureHttp(scenario, target, state, params, duration) {
  const req = scenario.request(target, state);
  const result = await autocannon({
    ...req,
    url: new URL(req.path ?? '/', target.url).href,
    connections: params.connections,
    pipelining: params.pipelining,
    duration,
  });
  return toSample(result);
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
      log(
        `round ${round}/${params.rounds}  ${s.name.padEnd(34)} ${fmtInt(sample.rps).padStart(8)} ops/s${fmtDrain(sample)}`,
      );
    }
  }
  return samples;
}

async function warmUp(scenarios, targets, states, params) {
  if (params.warmup <= 0) return;
  for (const s of scenarios) {
    const sample = await measure(s, targets[s.server], states.get(s.name), params, params.warmup);
    log(
      `warm-up ${params.warmup} s  ${s.name.padEnd(34)} ${fmtInt(sample.rps).padStart(8)} ops/s${fmtDrain(sample)}`,
    );
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

function summarize(scenarios, samples) {
  const rows = scenarios.map((s) => summarizeOne(s, samples.get(s.name)));
  const byName = new Map(rows.map((r) => [r.name, r]));
  for (const row of rows) {
    const base = row.baseline === null ? undefined : byName.get(row.baseline);
    row.ratio = base === undefined ? null : Math.round((row.median.rps / base.median.rps) * 100) / 100;
  }
  return rows;
}

function summarizeOne(scenario, list) {
  const rps = list.map((x) => x.rps);
  return {
    name: scenario.name,
    server: scenario.server,
    baseline: scenario.baseline,
    unit: scenario.run === undefined ? '2xx responses/s' : 'statements/s',
    samples: list,
    median: {
      rps: round1(median(rps)),
      p50: median(list.map((x) => x.p50)),
      p99: median(list.map((x) => x.p99)),
      cpuUs: list.every((x) => typeof x.cpuUs === 'number') ? median(list.map((x) => x.cpuUs)) : null,
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

function fmtDrain(sample) {
  if (sample.backlog === undefined) return '';
  return `  (worker backlog ${fmtInt(sample.backlog)}, drained in ${sample.drainMs} ms)`;
}

function drainNote(r) {
  return (
    `${r.name}: at the end of a run at most ${fmtInt(r.drain.maxBacklog)} created tasks were still ` +
    `unfinished; the worker finished them within ${r.drain.maxMs} ms, before the next row started.`
  );
}

function markdown(report) {
  const { machine, parameters: p } = report;
  const lines = [
    `## durable-mcp benchmark — ${machine.date}`,
    '',
    `Machine: ${machine.cpuModel} × ${machine.cores} cores, ${machine.totalMemGiB} GiB, ` +
      `${machine.platform} ${machine.release}, Node ${machine.node}, commit ${machine.commit}, ` +
      `load average at start ${machine.loadavg.join(' / ')}.`,
    `Load: autocannon ${report.loadGenerator.version} in the parent process, ${p.connections} connections, ` +
      `pipelining ${p.pipelining}; ${p.rounds} interleaved rounds × ${p.duration} s after a ${p.warmup} s ` +
      `warm-up per scenario. Servers in separate child processes on ${HOST}; the raw better-sqlite3 rows ` +
      `run a single-threaded loop in their own child process for the same ${p.duration} s, without load generator.`,
    '',
    '| scenario | ops/s median | ops/s min–max | p50 ms | p99 ms | CPU µs/op | non-2xx | errors | ratio vs baseline |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...report.scenarios.map(tableRow),
    '',
    'ops/s: 2xx responses per second for HTTP rows (p50/p99 at 1 ms resolution), statements per second for ' +
      'raw better-sqlite3 rows (each insert its own committed transaction; p50/p99 per statement). p50/p99 are ' +
      "medians of the per-round percentiles. CPU µs/op: median over rounds of the server process's CPU time " +
      "(user + system) per operation — for the creation row including the worker finishing the run's tasks; " +
      "for raw rows the SQLite child's, without fsync waits. ratio = median ops/s ÷ median ops/s of the named " +
      'row from the same run.',
  ];
  const drained = report.scenarios.filter((r) => r.drain !== undefined);
  if (drained.length > 0) lines.push('', ...drained.map((r) => `- ${drainNote(r)}`));
  return lines.join('\n') + '\n';
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
  };
}

async function startTargets(scenarios, ctx) {
  const keys = [...new Set(scenarios.map((s) => s.server))];
  const started = await Promise.all(keys.map((key) => startServer(key, ctx)));
  const targets = Object.fromEntries(started.map((t) => [t.key, t]));
  for (const key of keys) log(`${key}: ${targets[key].url}  (${SERVERS[key].label})`);
  return targets;
}

async function prepare(scenarios, targets) {
  const states = new Map();
  for (const s of scenarios) {
    const target = targets[s.server];
    states.set(s.name, s.setup === undefined ? undefined : await s.setup(target));
    await verifyScenario(s, target, states.get(s.name));
  }
  log('pre-flight: every scenario passed its check (HTTP 200 with a JSON-RPC result, or a raw SQLite run)');
  return states;
}

async function benchmark(params, workDir) {
  const targets = await startTargets(SCENARIOS, { workDir, cpuProf: params.cpuProf });
  const states = await prepare(SCENARIOS, targets);
  await warmUp(SCENARIOS, targets, states, params);
  const samples = await runRounds(SCENARIOS, targets, states, params);
  return summarize(SCENARIOS, samples);
}

function buildReport(params, machine, rows) {
  const { help: _help, cpuProf: _cpuProf, ...parameters } = params;
  return {
    machine,
    parameters: { ...parameters, host: HOST, protocolVersion: PROTOCOL_VERSION },
    loadGenerator: { name: 'autocannon', version: autocannonVersion(), inProcess: true },
    servers: Object.fromEntries(Object.entries(SERVERS).map(([k, v]) => [k, v.label])),
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
  const workDir = makeWorkDir();
  if (params.cpuProf) mkdirSync(params.cpuProf, { recursive: true });
  let rows;
  try {
    rows = await benchmark(params, workDir);
  } finally {
    await stopAll();
    removeWorkDirs();
  }
  const report = buildReport(params, machine, rows);
  const md = markdown(report);
  writeResults(report, md);
  console.log(md);
  log(`wrote ${join('bench', 'results', 'latest.json')} and ${join('bench', 'results', 'latest.md')}`);
  if (params.cpuProf) {
    const keys = Object.keys(SERVERS).filter((k) => k.startsWith('ours'));
    log(
      `CPU profiles of our servers: ${keys.map((k) => join(params.cpuProf, `${k}.cpuprofile`)).join(', ')}`,
    );
  }
  if (!reportFailures(rows)) process.exitCode = 1;
}

function onSignal(signal) {
  log(`${signal}: stopping servers`);
  stopAll().then(() => process.exit(130));
}

if (process.argv.includes('--serve-baseline')) {
  serveBaseline();
} else {
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', cleanUpNow);
  main(process.argv.slice(2)).catch((err) => {
    log(err instanceof UsageError ? `${err.message}\n${USAGE}` : `error: ${err.message}`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  });
}
