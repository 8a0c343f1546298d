// Shared pieces of the reliability suite: resource scopes (processes, temp dirs, PostgreSQL schemas) that are
// always cleaned up, `durable-mcp serve` children, a small JSON-RPC client over node:http, SSE subscriptions,
// the per-attempt log reader, a loopback TCP proxy for PostgreSQL faults, and statistics.
import { spawn } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  fstatSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
} from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { createServer as createNetServer, connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = join(ROOT, 'bin', 'durable-mcp.js');
export const CHAOS_TOOLS = join(ROOT, 'test', 'fixtures', 'tools', 'chaos-tools.mjs');
export const PROTOCOL_VERSION = '2026-07-28';
export const TASKS_EXT = 'io.modelcontextprotocol/tasks';
export const TASK_CAPS = { extensions: { [TASKS_EXT]: {} }, elicitation: {} };
/** Flags every chaos server gets: no rate limit or cap in the way of the load, no audit lines, quiet logs. */
export const COMMON_SERVE_FLAGS = [
  '--host',
  '127.0.0.1',
  '--port',
  '0',
  '--no-audit',
  '--tasks-get-rate',
  '0',
  '--max-active-tasks',
  '0',
  '--log-level',
  'warn',
];

export const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
export const now = () => Date.now();

// ---------------------------------------------------------------------------------------------------------
// Randomness: one seeded generator per section (the seed is printed, decisions are reproducible; timings are not).

export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => items[Math.floor(next() * items.length)],
    chance: (p) => next() < p,
    hex: (n = 8) => Array.from({ length: n }, () => Math.floor(next() * 16).toString(16)).join(''),
    weighted(table) {
      const total = table.reduce((s, [, w]) => s + w, 0);
      let x = next() * total;
      for (const [value, w] of table) {
        x -= w;
        if (x < 0) return value;
      }
      return table[table.length - 1][0];
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Scopes: everything a section creates is registered in its scope and released by close(), whatever happened.

const liveScopes = new Set();
/** Every child ever started, so that the 'exit' handler can kill stragglers of scopes already closed. */
const allChildren = new Set();

export class Scope {
  constructor(name) {
    this.name = name;
    this.children = new Set();
    this.dirs = [];
    this.closers = [];
    this.closed = false;
    liveScopes.add(this);
  }

  tempDir(prefix = 'durable-mcp-chaos-') {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    this.dirs.push(dir);
    return dir;
  }

  /** Registers an async clean-up step (run in reverse order of registration). */
  defer(fn) {
    this.closers.push(fn);
  }

  killAll() {
    for (const child of this.children) {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          child.kill('SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  }

  async close() {
    if (this.closed) return;
    this.closed = true;
    this.killAll();
    await Promise.all(
      [...this.children].map((c) =>
        c.exitCode === null && c.signalCode === null
          ? new Promise((r) => {
              c.once('exit', r);
              setTimeout(r, 3_000).unref();
            })
          : undefined,
      ),
    );
    for (const fn of this.closers.splice(0).reverse()) {
      try {
        await fn();
      } catch (err) {
        console.error(`chaos: clean-up in ${this.name} failed: ${err instanceof Error ? err.message : err}`);
      }
    }
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    liveScopes.delete(this);
  }
}

/** Synchronous last resort (process 'exit'): kill children and remove temp dirs of every open scope. */
export function emergencyCleanupSync() {
  for (const child of allChildren) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL');
      } catch {
        // gone
      }
    }
  }
  for (const scope of liveScopes) {
    scope.killAll();
    for (const dir of scope.dirs) {
      try {
        rmSync(dir, { recursive: true, force: true });
      } catch {
        // best effort
      }
    }
  }
}

/** Asynchronous clean-up of every open scope (signals, fatal errors). */
export async function closeAllScopes() {
  for (const scope of [...liveScopes]) await scope.close();
}

// ---------------------------------------------------------------------------------------------------------
// `durable-mcp serve` children

const TAIL_BYTES = 65_536;

/**
 * Starts `node bin/durable-mcp.js serve …` in the scope; resolves when it prints its listening line. The returned
 * object's `ready` is false until then; `exited` resolves with the exit code or signal.
 */
export function startServe(scope, args, { env = {}, timeoutMs = 20_000, nodeArgs = [] } = {}) {
  const child = spawn(process.execPath, [...nodeArgs, BIN, 'serve', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  scope.children.add(child);
  allChildren.add(child);
  child.once('exit', () => allChildren.delete(child));
  // A section that outlived its time bound may still try to start servers after its scope was closed.
  if (scope.closed) child.kill('SIGKILL');
  let out = '';
  let err = '';
  const proc = {
    child,
    pid: child.pid,
    url: undefined,
    port: undefined,
    ready: false,
    dead: false,
    startedAt: now(),
    stderr: () => err,
    exited: new Promise((resolveExit) =>
      child.on('exit', (code, signal) => {
        proc.dead = true;
        proc.ready = false;
        resolveExit(signal ?? code);
      }),
    ),
  };
  child.stderr.on('data', (c) => {
    err += c.toString();
    if (err.length > TAIL_BYTES * 2) err = err.slice(-TAIL_BYTES);
  });
  proc.started = new Promise((resolveStart, rejectStart) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      rejectStart(new Error(`serve did not start within ${timeoutMs} ms: ${err.slice(-2_000)}`));
    }, timeoutMs);
    child.stdout.on('data', (c) => {
      if (proc.ready) return;
      out += c.toString();
      const m = /^listening on (http:\/\/[^\s]+\/mcp)$/m.exec(out);
      if (m === null) return;
      clearTimeout(timer);
      proc.url = m[1];
      proc.port = Number(new URL(m[1]).port);
      proc.ready = true;
      resolveStart(proc);
    });
    void proc.exited.then((code) => {
      clearTimeout(timer);
      if (!proc.ready)
        rejectStart(new Error(`serve exited (${code}) before listening: ${err.slice(-2_000)}`));
    });
  });
  proc.started.catch(() => undefined);
  return proc;
}

/**
 * What a crashed server printed, headline first: its JSON log lines dropped, the unhandled error named (with its
 * code and the kind of object that emitted it), then the tail of the trace.
 */
export function crashExcerpt(stderr) {
  const text = stderr
    .split('\n')
    .filter((l) => !l.startsWith('{'))
    .join('\n')
    .trim();
  const unhandled = /Unhandled 'error' event\s*\n\s*\^\s*\n+\s*(.+)/.exec(text);
  const headline = unhandled
    ? `unhandled 'error' event: ${unhandled[1].trim()}`
    : (text.split('\n').find((l) => /Error\b|error:/.test(l)) ?? text.split('\n')[0] ?? '(no output)');
  const code = /\bcode: '([^']+)'/.exec(text);
  const emitter = /Emitted 'error' event on (\w+) instance/.exec(text);
  return `${headline.trim()}${code ? ` (${code[1]})` : ''}${emitter ? `, emitted on a ${emitter[1]} with no 'error' listener` : ''}\n${text.slice(-2_500)}`;
}

/** SIGKILLs a serve child and waits until the OS has reaped it. */
export async function killHard(proc) {
  if (!proc.dead) {
    try {
      proc.child.kill('SIGKILL');
    } catch {
      // gone already
    }
  }
  await proc.exited;
}

/** Resident set size of a process in bytes (Linux /proc), or undefined when it is gone. */
export function rssOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(status);
    return m === null ? undefined : Number(m[1]) * 1024;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------------------
// JSON-RPC over HTTP

let nextId = 1;
export const defaultAgent = new Agent({ keepAlive: true, maxSockets: 64 });

export function envelope(caps = TASK_CAPS) {
  return {
    'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
    'io.modelcontextprotocol/clientCapabilities': caps,
    'io.modelcontextprotocol/clientInfo': { name: 'durable-mcp-chaos', version: '0.0.0' },
  };
}

const nameOf = (method, params) =>
  method === 'tools/call' || method === 'prompts/get'
    ? params.name
    : method === 'resources/read'
      ? params.uri
      : method.startsWith('tasks/')
        ? params.taskId
        : undefined;

/** Last JSON-RPC message of a body (JSON, or the data of an SSE stream). */
function lastMessage(contentType, text) {
  if (contentType.startsWith('text/event-stream')) {
    let last;
    for (const block of text.replace(/\r\n?/g, '\n').split('\n\n')) {
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''));
      if (data.length > 0) last = JSON.parse(data.join('\n'));
    }
    return last;
  }
  return text.length === 0 ? undefined : JSON.parse(text);
}

/**
 * One JSON-RPC request. Never throws: resolves `{status, result?, error?, netError?, ms}` (`netError` for a
 * refused, reset or timed-out connection, `badBody` for a body that is not JSON-RPC). With `retryReused`, a reset
 * of a kept-alive socket the server had just closed as idle is retried once on a fresh connection (the request
 * never reached the server); never use it where a process may have died mid-request. `meta` adds fields to the
 * request's `_meta`. `drop` plays a client whose answer gets lost: the request is torn down unread `drop.afterMs`
 * after its body was sent, or as soon as the answer begins, whichever comes first; it resolves
 * `{netError: 'dropped', droppedAt: 'sent' | 'answer'}`.
 */
export async function rpc(url, method, params = {}, options = {}) {
  const first = await rpcOnce(url, method, params, options);
  if (options.retryReused && first.reusedSocket && first.netError === 'ECONNRESET') {
    return rpcOnce(url, method, params, options);
  }
  return first;
}

function rpcOnce(
  url,
  method,
  params,
  { caps = TASK_CAPS, timeoutMs = 15_000, agent = defaultAgent, meta, drop } = {},
) {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: nextId++,
    method,
    params: { ...params, _meta: { ...envelope(caps), ...meta } },
  });
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'content-length': Buffer.byteLength(body),
    'mcp-protocol-version': PROTOCOL_VERSION,
    'mcp-method': method,
  };
  const name = nameOf(method, params);
  if (typeof name === 'string') headers['mcp-name'] = name;
  const started = performance.now();
  return new Promise((resolveRpc) => {
    let settled = false;
    const done = (value) => {
      if (settled) return;
      settled = true;
      resolveRpc({ ...value, ms: performance.now() - started });
    };
    const req = httpRequest(url, { method: 'POST', agent, headers }, (res) => {
      if (drop !== undefined) {
        done({ status: res.statusCode, netError: 'dropped', droppedAt: 'answer' });
        req.destroy();
        return;
      }
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('error', (err) => done({ status: res.statusCode, netError: err.code ?? err.message }));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          const msg = lastMessage(String(res.headers['content-type'] ?? ''), text);
          if (msg === undefined || typeof msg !== 'object') {
            done({ status: res.statusCode, badBody: text.slice(0, 300) });
          } else {
            done({ status: res.statusCode, result: msg.result, error: msg.error });
          }
        } catch {
          done({ status: res.statusCode, badBody: text.slice(0, 300) });
        }
      });
    });
    const timer = setTimeout(
      () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })),
      timeoutMs,
    );
    req.on('close', () => clearTimeout(timer));
    req.on('error', (err) => done({ netError: err.code ?? err.message, reusedSocket: req.reusedSocket }));
    req.end(body, () => {
      if (drop === undefined) return;
      setTimeout(() => {
        if (settled) return;
        done({ netError: 'dropped', droppedAt: 'sent' });
        req.destroy();
      }, drop.afterMs ?? 0);
    });
  });
}

/** GET a path (e.g. /healthz) on the server of `url`; resolves `{status, text, ms}` or `{netError, ms}`. */
export function httpGet(url, path, { timeoutMs = 5_000, agent = defaultAgent } = {}) {
  const target = new URL(path, url);
  const started = performance.now();
  return new Promise((resolveGet) => {
    const req = httpRequest(target, { method: 'GET', agent }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('error', (err) =>
        resolveGet({ netError: err.code ?? err.message, ms: performance.now() - started }),
      );
      res.on('end', () =>
        resolveGet({
          status: res.statusCode,
          text: Buffer.concat(chunks).toString('utf8'),
          ms: performance.now() - started,
        }),
      );
    });
    const timer = setTimeout(
      () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })),
      timeoutMs,
    );
    req.on('close', () => clearTimeout(timer));
    req.on('error', (err) =>
      resolveGet({ netError: err.code ?? err.message, ms: performance.now() - started }),
    );
    req.end();
  });
}

/**
 * A `subscriptions/listen` stream for task ids. `onMessage` gets every JSON-RPC message; `ack` resolves with the
 * acknowledgement (or rejects); `close()` aborts the request.
 */
export function subscribe(
  url,
  taskIds,
  { agent, onMessage, timeoutMs = 30_000, id = `sub-${nextId++}` } = {},
) {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'subscriptions/listen',
    params: { notifications: { taskIds }, _meta: envelope() },
  });
  let req;
  let closed = false;
  const ack = new Promise((resolveAck, rejectAck) => {
    const timer = setTimeout(() => {
      rejectAck(new Error('no acknowledgement'));
      req?.destroy();
    }, timeoutMs);
    req = httpRequest(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(body),
          'mcp-protocol-version': PROTOCOL_VERSION,
          'mcp-method': 'subscriptions/listen',
        },
      },
      (res) => {
        if (!String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
          clearTimeout(timer);
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () =>
            rejectAck(new Error(`not a stream: ${res.statusCode} ${Buffer.concat(chunks)}`)),
          );
          return;
        }
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          buffer += chunk;
          buffer = buffer.replace(/\r\n?/g, '\n');
          let cut;
          while ((cut = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const data = block
              .split('\n')
              .filter((l) => l.startsWith('data:'))
              .map((l) => l.slice(5).replace(/^ /, ''));
            if (data.length === 0) continue;
            let msg;
            try {
              msg = JSON.parse(data.join('\n'));
            } catch {
              continue;
            }
            if (msg.method === 'notifications/subscriptions/acknowledged') {
              clearTimeout(timer);
              resolveAck(msg);
            }
            onMessage?.(msg);
          }
        });
        res.on('error', () => undefined);
        res.on('end', () => {
          clearTimeout(timer);
          if (!closed) rejectAck(new Error('stream ended'));
        });
      },
    );
    req.on('error', (err) => {
      clearTimeout(timer);
      rejectAck(err);
    });
    req.end(body);
  });
  ack.catch(() => undefined);
  return {
    ack,
    close() {
      closed = true;
      req?.destroy();
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// The per-attempt log written by test/fixtures/tools/chaos-tools.mjs

/** Reads new complete lines of the log since the last call: `{seq, event, task, run, detail, pid, t}`. */
export class LogTail {
  constructor(path) {
    this.path = path;
    this.fd = openSync(path, 'r');
    this.offset = 0;
    this.rest = '';
    this.seq = 0;
    this.buffer = Buffer.alloc(1 << 20);
  }

  read() {
    const out = [];
    for (;;) {
      const size = fstatSync(this.fd).size;
      if (size <= this.offset) break;
      const n = readSync(
        this.fd,
        this.buffer,
        0,
        Math.min(this.buffer.length, size - this.offset),
        this.offset,
      );
      if (n <= 0) break;
      this.offset += n;
      const text = this.rest + this.buffer.toString('utf8', 0, n);
      const lines = text.split('\n');
      this.rest = lines.pop() ?? '';
      for (const line of lines) {
        const parsed = parseLogLine(line, this.seq);
        if (parsed !== undefined) {
          this.seq += 1;
          out.push(parsed);
        }
      }
    }
    return out;
  }

  close() {
    closeSync(this.fd);
  }
}

/** One log line; `n` (the attempt of a step line, the ms of a sleep) is undefined where the line has none. */
export function parseLogLine(line, seq) {
  const f = line.trim().split(' ');
  if (f.length !== 6 && f.length !== 7) return undefined;
  const n = f.length === 7 ? Number(f[6]) : undefined;
  return { seq, event: f[0], task: f[1], run: f[2], detail: f[3], pid: Number(f[4]), t: Number(f[5]), n };
}

export const appendLog = (path, event, pid) => appendFileSync(path, `${event} - - - ${pid} ${now()}\n`);

// ---------------------------------------------------------------------------------------------------------
// PostgreSQL

export const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/test';

export async function pgQuery(url, sql, params = []) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function pgReachable(url) {
  try {
    await pgQuery(url, 'SELECT 1');
    return true;
  } catch {
    return false;
  }
}

/** A fresh schema name for this run, registered for DROP … CASCADE when the scope closes. */
export function pgSchema(scope, url, label) {
  const name = `chaos_${label}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`.slice(0, 50);
  scope.defer(async () => {
    await pgQuery(url, `DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(name)} CASCADE`);
  });
  return name;
}

/** Replaces host and port of a PostgreSQL URL (to send a server through the fault proxy). */
export function viaPort(url, port) {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
}

// ---------------------------------------------------------------------------------------------------------
// A loopback TCP proxy in front of PostgreSQL: lets the suite cut, refuse or black-hole the server's connections
// without touching anybody else's, and tells which backend connections belong to the server under test.

export async function startProxy(scope, targetUrl) {
  const target = new URL(targetUrl);
  const targetPort = Number(target.port || 5432);
  const targetHost = target.hostname;
  const pairs = new Set();
  let mode = 'up';
  const onClient = (client) => {
    client.on('error', () => undefined);
    if (mode === 'reset') {
      client.destroy();
      return;
    }
    const upstream = netConnect(targetPort, targetHost);
    const pair = { client, upstream, port: undefined, paused: false };
    pairs.add(pair);
    upstream.on('error', () => undefined);
    upstream.on('connect', () => {
      pair.port = upstream.localPort;
    });
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    if (mode === 'blackhole') pause(pair);
    else wire(pair);
  };
  const wire = (pair) => {
    pair.paused = false;
    pair.client.pipe(pair.upstream);
    pair.upstream.pipe(pair.client);
  };
  const pause = (pair) => {
    pair.paused = true;
    pair.client.unpipe(pair.upstream);
    pair.upstream.unpipe(pair.client);
    pair.client.pause();
    pair.upstream.pause();
  };
  let server = createNetServer(onClient);
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const port = server.address().port;
  const proxy = {
    port,
    get mode() {
      return mode;
    },
    /** Local ports of the proxy's upstream connections: client_port of the server's backends. */
    upstreamPorts: () => [...pairs].map((p) => p.port).filter((p) => p !== undefined),
    /** refuse: nothing listens; reset: connections are cut at once; blackhole: bytes stop flowing. */
    async down(kind) {
      mode = kind;
      if (kind === 'blackhole') {
        for (const pair of pairs) pause(pair);
        return;
      }
      for (const pair of [...pairs]) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
      pairs.clear();
      if (kind === 'refuse') await new Promise((r) => server.close(() => r()));
    },
    async up() {
      const was = mode;
      mode = 'up';
      if (was === 'refuse') {
        server = createNetServer(onClient);
        await new Promise((r, j) => {
          server.once('error', j);
          server.listen(port, '127.0.0.1', r);
        });
      }
      if (was === 'blackhole') for (const pair of pairs) if (pair.paused) wire(pair);
    },
    async close() {
      for (const pair of [...pairs]) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
      await new Promise((r) => server.close(() => r()));
    },
  };
  scope.defer(() => proxy.close().catch(() => undefined));
  return proxy;
}

// ---------------------------------------------------------------------------------------------------------
// Statistics and formatting

export function percentile(values, p) {
  if (values.length === 0) return undefined;
  const sorted = Float64Array.from(values).sort();
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx];
}

export const fmtMs = (v) => (v === undefined ? '–' : v >= 100 ? `${Math.round(v)} ms` : `${v.toFixed(1)} ms`);
export const fmtMb = (bytes) => (bytes === undefined ? '–' : `${Math.round(bytes / 1048576)} MB`);
export const fmtInt = (n) => Number(n).toLocaleString('en-US');

/** Invariant bookkeeping for a section: `check(name)` returns a handle to count checks and record failures. */
export class Invariants {
  constructor() {
    this.list = new Map();
  }

  define(name, description) {
    if (!this.list.has(name)) this.list.set(name, { name, description, checks: 0, failures: [] });
    return this.list.get(name);
  }

  ok(name, n = 1) {
    this.define(name).checks += n;
  }

  fail(name, message) {
    const inv = this.define(name);
    inv.checks += 1;
    if (inv.failures.length < 50) inv.failures.push(message);
    else inv.truncated = (inv.truncated ?? 0) + 1;
  }

  /** Counts a check that passed when `cond` holds, else records `message()`. */
  expect(name, cond, message) {
    if (cond) this.ok(name);
    else this.fail(name, typeof message === 'function' ? message() : message);
    return cond;
  }

  toJSON() {
    return [...this.list.values()];
  }
}
