// Benchmark harness: interleaved autocannon rounds against a bare node:http JSON-RPC baseline and `durable-mcp serve`.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';

const SELF = fileURLToPath(import.meta.url);
const BENCH_DIR = dirname(SELF);
const ROOT = resolve(BENCH_DIR, '..');
const RESULTS_DIR = join(BENCH_DIR, 'results');
const HOST = '127.0.0.1';
const PROTOCOL_VERSION = '2026-07-28';
const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;

const PRESETS = {
  default: { duration: 5, rounds: 5, warmup: 2, connections: 50, pipelining: 1 },
  quick: { duration: 1, rounds: 3, warmup: 1, connections: 50, pipelining: 1 },
};

const USAGE = `usage: npm run bench -- [flags]
  --quick              smoke run (~15 s): ${describePreset(PRESETS.quick)}
  --duration SEC       seconds per measured run (default ${PRESETS.default.duration})
  --rounds N           interleaved rounds per scenario (default ${PRESETS.default.rounds})
  --warmup SEC         discarded warm-up run per scenario before the rounds (default ${PRESETS.default.warmup}; 0 skips)
  --connections N      concurrent keep-alive connections (default ${PRESETS.default.connections})
  --pipelining N       requests in flight per connection (default ${PRESETS.default.pipelining})
  --cpu-prof DIR       run our server under node --cpu-prof, writing .cpuprofile files to DIR
  --help               this text`;

function describePreset(p) {
  return `${p.rounds} rounds × ${p.duration} s, ${p.warmup} s warm-up, ${p.connections} connections`;
}

// ---------------------------------------------------------------------------------------------------------
// Servers under test. Each runs in its own child process and prints `listening on http://127.0.0.1:PORT/…`.

const SERVERS = {
  baseline: {
    label: 'bare node:http: read body, JSON.parse, JSON-RPC reply echoing the id',
    command: () => [SELF, '--serve-baseline'],
  },
  ours: {
    label: 'node bin/durable-mcp.js serve --tools demo (SQLite store in a temp dir)',
    command: (ctx) => [
      ...(ctx.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', ctx.cpuProf] : []),
      join(ROOT, 'bin', 'durable-mcp.js'),
      'serve',
      '--host',
      HOST,
      '--port',
      '0',
      '--tools',
      'demo',
      '--store',
      join(ctx.workDir, 'tasks.db'),
    ],
  },
};

// ---------------------------------------------------------------------------------------------------------
// Scenarios, measured in this order in every round. To add one, append an object:
//   name      unique row label
//   server    key of SERVERS it talks to
//   baseline  name of the scenario its ratio is computed against (null for a baseline row)
//   setup     optional async (target) => state, run once after the servers start (e.g. create a task)
//   request   (target, state) => autocannon request options: { method, path, headers, body } (or `requests`)
//   verify    optional (status, text) => error string | undefined; defaults to expectJsonRpcResult

const META = {
  'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
};

function mcpRequest(method, params = {}, name) {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': PROTOCOL_VERSION,
    'mcp-method': method,
  };
  if (name !== undefined) headers['mcp-name'] = name;
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: META } });
  return { method: 'POST', path: '/mcp', headers, body };
}

const callEcho = () => mcpRequest('tools/call', { name: 'echo', arguments: { text: 'hi' } }, 'echo');

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
];

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

function startServer(key, ctx) {
  const child = spawn(process.execPath, SERVERS[key].command(ctx), {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return waitForListening(key, child);
}

function waitForListening(key, child) {
  return new Promise((resolveStart, reject) => {
    let out = '';
    let err = '';
    let settled = false;
    const settle = (fn, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn(value);
    };
    const fail = (why) =>
      settle(reject, new Error(`${key} server ${why}${err ? `; its stderr:\n${err.trim()}` : ''}`));
    const timer = setTimeout(
      () => fail(`did not start within ${START_TIMEOUT_MS / 1000} s`),
      START_TIMEOUT_MS,
    );
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('exit', (code, signal) => fail(`exited early (${signal ?? code})`));
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) settle(resolveStart, { key, child, url: m[1] });
    });
  }).then((target) => checkLoopback(key, target));
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

function killAllNow() {
  for (const child of children) child.kill('SIGKILL');
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

async function verifyScenario(scenario, target, state) {
  const req = scenario.request(target, state);
  const res = await fetch(new URL(req.path, target.url), {
    method: req.method,
    headers: req.headers,
    body: req.body,
  });
  const problem = (scenario.verify ?? expectJsonRpcResult)(res.status, await res.text());
  if (problem !== undefined) {
    throw new Error(`scenario "${scenario.name}" failed its pre-flight check: ${problem}`);
  }
}

async function measure(scenario, target, state, params, duration) {
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
      log(`round ${round}/${params.rounds}  ${s.name.padEnd(22)} ${fmtInt(sample.rps).padStart(8)} req/s`);
    }
  }
  return samples;
}

async function warmUp(scenarios, targets, states, params) {
  if (params.warmup <= 0) return;
  for (const s of scenarios) {
    log(`warm-up ${params.warmup} s  ${s.name}`);
    await measure(s, targets[s.server], states.get(s.name), params, params.warmup);
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
    samples: list,
    median: {
      rps: round1(median(rps)),
      p50: median(list.map((x) => x.p50)),
      p99: median(list.map((x) => x.p99)),
    },
    min: { rps: Math.min(...rps) },
    max: { rps: Math.max(...rps) },
    non2xx: sum(list.map((x) => x.non2xx)),
    errors: sum(list.map((x) => x.errors + x.timeouts)),
  };
}

function fmtInt(n) {
  return Math.round(n).toLocaleString('en-US');
}

function fmtRatio(row) {
  if (row.baseline === null) return '1.00 (baseline)';
  return `${row.ratio.toFixed(2)}`;
}

function markdown(report) {
  const { machine, parameters: p } = report;
  const lines = [
    `## durable-mcp benchmark — ${machine.date}`,
    '',
    `Machine: ${machine.cpuModel} × ${machine.cores} cores, ${machine.totalMemGiB} GiB, ` +
      `${machine.platform} ${machine.release}, Node ${machine.node}, commit ${machine.commit}.`,
    `Load: autocannon ${report.loadGenerator.version} in the parent process, ${p.connections} connections, ` +
      `pipelining ${p.pipelining}; ${p.rounds} interleaved rounds × ${p.duration} s after a ${p.warmup} s ` +
      `warm-up per scenario. Servers in separate child processes on ${HOST}.`,
    '',
    '| scenario | req/s median | req/s min–max | p50 ms | p99 ms | non-2xx | errors | ratio vs baseline |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...report.scenarios.map(tableRow),
    '',
    'req/s counts 2xx responses only; p50/p99 are medians of the per-round percentiles; ' +
      'ratio = median req/s ÷ median req/s of the baseline row from the same run.',
  ];
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
  const targets = {};
  for (const key of keys) {
    targets[key] = await startServer(key, ctx);
    log(`${key}: ${targets[key].url}  (${SERVERS[key].label})`);
  }
  return targets;
}

async function prepare(scenarios, targets) {
  const states = new Map();
  for (const s of scenarios) {
    const target = targets[s.server];
    states.set(s.name, s.setup === undefined ? undefined : await s.setup(target));
    await verifyScenario(s, target, states.get(s.name));
  }
  log('pre-flight: every scenario answers HTTP 200 with a JSON-RPC result');
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
  const workDir = mkdtempSync(join(tmpdir(), 'durable-mcp-bench-'));
  if (params.cpuProf) mkdirSync(params.cpuProf, { recursive: true });
  let rows;
  try {
    rows = await benchmark(params, workDir);
  } finally {
    await stopAll();
    rmSync(workDir, { recursive: true, force: true });
  }
  const report = buildReport(params, machine, rows);
  const md = markdown(report);
  writeResults(report, md);
  console.log(md);
  log(`wrote ${join('bench', 'results', 'latest.json')} and ${join('bench', 'results', 'latest.md')}`);
  if (params.cpuProf) log(`CPU profiles of our server are in ${params.cpuProf}`);
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
  process.on('exit', killAllNow);
  main(process.argv.slice(2)).catch((err) => {
    log(err instanceof UsageError ? `${err.message}\n${USAGE}` : `error: ${err.message}`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  });
}
