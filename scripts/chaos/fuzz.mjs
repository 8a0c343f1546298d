// Section 3, bad input: property-based fuzzing of the whole HTTP surface of a real `serve` process (conformance
// tools, the tasks extension and the chaos tools on a SQLite store), at volume. The generators and the oracle are
// those of test/e2e/fuzz.test.ts (test/support/fuzz-model.ts, transpiled on the fly): random JSON, strings and
// invalid UTF-8, truncated and near-valid requests, random ids, methods, params, _meta and header sets, every reply
// checked against the official schema (test/support/schema.ts) with the status, id echo and stream rules. This
// script adds the tasks surface (real and forged task ids), other HTTP methods and paths, pathological sizes
// (10k-deep nesting, ~1 MB strings, bodies over the limit) and a slowloris phase. The server must never answer
// 5xx or die, and its memory must stay bounded.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect as netConnect } from 'node:net';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import {
  CHAOS_TOOLS,
  COMMON_SERVE_FLAGS,
  crashExcerpt,
  fmtInt,
  fmtMb,
  fmtMs,
  httpGet,
  Invariants,
  now,
  percentile,
  PROTOCOL_VERSION,
  ROOT,
  rng as makeRng,
  rpc,
  rssOf,
  sleep,
  startServe,
  TASK_CAPS,
  TASKS_EXT,
} from './lib.mjs';

export const FUZZ_INVARIANTS = {
  'schema-valid':
    'every reply is a schema-valid JSON-RPC message (official 2026-07-28 + tasks schemas) with the status, id echo and stream rules of test/e2e/fuzz.test.ts',
  'no-5xx': 'no 5xx answer (there is no true internal fault to report on a healthy store)',
  'no-crash': 'the server process stays up and /healthz answers throughout',
  'bounded-memory':
    'the server runs the whole fuzz with its V8 old space capped (--max-old-space-size), so a leak would kill it, and its resident set stays under the limit',
  slowloris: 'while hundreds of connections trickle bytes, /healthz and tools/list still answer within 2 s',
  volume: 'the planned number of generated requests was sent within the time bound',
};

// ---------------------------------------------------------------------------------------------------------
// Modules of test/support (the fuzz model, the schema validator, the HTTP helpers), transpiled to plain JavaScript
// at run time.

/**
 * Imports test/support/<name>.ts for each name, in order. Each file and the relative imports it reaches are
 * transpiled into `dir` (as .mjs, in the layout of the repository), their package imports resolved from here and
 * `import.meta.url` kept pointing at the source file.
 */
export async function loadTestSupport(dir, names) {
  const ts = (await import('typescript')).default;
  const written = new Set();
  const files = names.map((name) =>
    transpileTree(ts, join(ROOT, 'test', 'support', `${name}.ts`), dir, written),
  );
  return Promise.all(files.map((file) => import(pathToFileURL(file).href)));
}

/** Transpiles one file (and, first, what it imports) unless already done; returns the path of its .mjs. */
function transpileTree(ts, srcPath, dir, written) {
  const outPath = join(dir, relative(ROOT, srcPath)).replace(/\.ts$/, '.mjs');
  if (written.has(outPath)) return outPath;
  written.add(outPath);
  const js = ts.transpileModule(readFileSync(srcPath, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  // Rewrite the import specifiers from the last to the first, so that earlier positions stay valid.
  const imports = ts.preProcessFile(js, true, true).importedFiles.sort((a, b) => b.pos - a.pos);
  let text = js;
  for (const { fileName, pos } of imports) {
    const start = js.indexOf(fileName, pos);
    const target = importTarget(ts, fileName, srcPath, dir, written);
    text = `${text.slice(0, start)}${target}${text.slice(start + fileName.length)}`;
  }
  mkdirSync(dirname(outPath), { recursive: true });
  writeFileSync(outPath, text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(srcPath).href)));
  return outPath;
}

/** Where an import of a transpiled file points: a sibling .mjs, a Node built-in, or a package file URL. */
function importTarget(ts, specifier, srcPath, dir, written) {
  if (specifier.startsWith('node:')) return specifier;
  if (!specifier.startsWith('.')) return import.meta.resolve(specifier);
  transpileTree(ts, resolve(dirname(srcPath), specifier.replace(/\.js$/, '.ts')), dir, written);
  return specifier.replace(/\.js$/, '.mjs');
}

// ---------------------------------------------------------------------------------------------------------
// HTTP beyond the post() of test/support/http.ts: a fresh connection per request, and other methods and paths

/** Like post(), over node:http on a connection of its own (no pooling). */
function postFresh({ withDefaults, parseBody }, url, body, headers, { timeoutMs, sseTimeoutMs }) {
  const target = new URL(url);
  const out = {};
  for (const [k, v] of Object.entries(withDefaults(headers)))
    if (v !== undefined) out[k] = typeof v === 'string' ? v : [...v];
  const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);
  out['content-length'] = String(payload.length);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: out,
        agent: false,
      },
      (res) => {
        const contentType = String(res.headers['content-type'] ?? '');
        const chunks = [];
        let truncated = false;
        const finish = () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const { messages, jsonError } = parseBody(contentType, text);
          const h = new globalThis.Headers();
          for (let i = 0; i < res.rawHeaders.length; i += 2)
            h.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
          resolve({
            status: res.statusCode ?? 0,
            headers: h,
            text,
            messages,
            jsonError,
            truncated,
            contentType,
          });
        };
        if (contentType.startsWith('text/event-stream')) {
          setTimeout(() => {
            truncated = !res.complete;
            res.destroy();
            finish();
          }, sseTimeoutMs);
        }
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          if (!contentType.startsWith('text/event-stream')) finish();
        });
        res.on('error', () => undefined);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', reject);
    req.end(payload);
  });
}

function rawRequest(url, { method, path, headers, body }) {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      // A fresh connection each time: a kept-alive socket the server has just timed out would read as a hang-up.
      { host: target.hostname, port: target.port, path, method, headers, timeout: 10_000, agent: false },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('rawRequest: timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

// ---------------------------------------------------------------------------------------------------------
// The fuzzed surface: the conformance surface of fuzz.test.ts plus the tasks extension and the chaos tools

/** Tools of the tasks extension (conformance and chaos sets). */
const TASK_TOOLS = [
  'greet',
  'slow_compute',
  'failing_job',
  'protocol_error_job',
  'confirm_delete',
  'multi_input',
  'test_tool_with_task',
  'chaos_job',
  'chaos_load',
];

/** Plausible arguments of the task tools. */
const TASK_TOOL_ARGS = {
  greet: fc.record({ name: fc.string({ maxLength: 12 }) }),
  slow_compute: fc.record(
    {
      seconds: fc.oneof(fc.constantFrom(0, 0.01, 0.05), fc.double({ min: -1, max: 1000 })),
      label: fc.string({ maxLength: 6 }),
    },
    { requiredKeys: ['seconds'] },
  ),
  confirm_delete: fc.record({ filename: fc.string({ maxLength: 10 }) }),
  chaos_job: fc.record(
    {
      steps: fc.integer({ min: -1, max: 9 }),
      inputs: fc.integer({ min: -1, max: 3 }),
      ms: fc.integer({ min: 0, max: 20 }),
    },
    { requiredKeys: [] },
  ),
  chaos_load: fc.record({ n: fc.oneof(fc.integer(), fc.string({ maxLength: 3 })) }, { requiredKeys: [] }),
};

/** Answers to the input requests of the task tools, and malformed ones. */
const TASK_INPUT_RESPONSES = [
  { k0: { action: 'accept', content: { v: 'fuzz' } } },
  { k0: { action: 'accept', content: 'not an object' } },
  { go: { action: 'cancel' } },
  { confirm_delete: { action: 'accept', content: { confirm: true } } },
];

/** Real task ids, well-formed unknown ones, near misses and junk. */
function taskIdArb(taskIds, prototypeNames) {
  return fc.oneof(
    fc.constantFrom(...taskIds),
    fc
      .string({
        unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-'),
        minLength: 32,
        maxLength: 32,
      })
      .map((s) => `task_${s}`),
    fc.string({ maxLength: 40 }),
    fc.constantFrom('', 'task_', `${taskIds[0]}x`, taskIds[0].toUpperCase(), ...prototypeNames),
  );
}

/** Params of tasks/get, tasks/cancel and tasks/update (undefined for other methods). */
function taskParams(method, taskId, inputResponses) {
  const anyTaskId = fc.oneof(
    { weight: 4, arbitrary: taskId },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
  );
  switch (method) {
    case 'tasks/get':
    case 'tasks/cancel':
      return fc.record({ taskId: anyTaskId }, { requiredKeys: [] });
    case 'tasks/update':
      return fc.record(
        {
          taskId: anyTaskId,
          inputResponses: fc.oneof(
            { weight: 4, arbitrary: inputResponses },
            { weight: 1, arbitrary: fc.constant(undefined) },
          ),
        },
        { requiredKeys: [] },
      );
    default:
      return undefined;
  }
}

function chaosSurface(model, taskIds) {
  const base = model.CONFORMANCE_SURFACE;
  const taskId = taskIdArb(taskIds, model.PROTOTYPE_NAMES);
  return {
    tools: [...base.tools, ...TASK_TOOLS],
    busyTools: [...base.busyTools, 'chaos_job', 'slow_compute'],
    argsForTool: { ...base.argsForTool, ...TASK_TOOL_ARGS },
    methods: [...model.CORE_METHODS, ...model.TASK_METHODS],
    otherMethods: [...model.UNSERVED_METHODS, 'tasks/get '],
    inputResponses: [...base.inputResponses, ...TASK_INPUT_RESPONSES],
    validCaps: { ...base.validCaps, extensions: { [TASKS_EXT]: {} } },
    tasks: {
      taskIds,
      listenTaskIds: fc.oneof(
        fc.array(taskId, { maxLength: 3 }),
        fc.constant('x'),
        fc.array(fc.integer(), { maxLength: 2 }),
      ),
      params: (method, inputResponses) => taskParams(method, taskId, inputResponses),
    },
  };
}

/** Requests with other HTTP methods, paths and Host headers. */
function rawArb(validRequestArb) {
  return fc.record({
    method: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'POST', 'PROPFIND'),
    path: fc.oneof(
      fc.constantFrom(
        '/mcp',
        '/mcp/',
        '/MCP',
        '/',
        '/healthz',
        '/healthz?x=1',
        '/metrics',
        '/.well-known/oauth-protected-resource',
        '/mcp?x=%zz',
        '//mcp',
        '/mcp/../mcp',
      ),
      fc.string({ unit: fc.constantFrom(...'/abcmp?=&%.~-_0123456789'), maxLength: 20 }).map((s) => `/${s}`),
    ),
    host: fc.oneof(
      { weight: 6, arbitrary: fc.constant(undefined) },
      {
        weight: 1,
        arbitrary: fc.constantFrom('evil.example', 'localhost', '127.0.0.1:1', '[::1]', '', 'a'.repeat(300)),
      },
    ),
    body: fc.oneof(
      fc.constant(undefined),
      fc.string({ maxLength: 60 }),
      validRequestArb.map((r) => JSON.stringify(r)),
    ),
  });
}

/** A task tool call to create a task, then a tasks/* (or listen) request on a real task id. */
function taskCallArb(toolArgsArb, inputResponsesArb) {
  return fc.record({
    tool: fc.constantFrom(
      'chaos_job',
      'slow_compute',
      'confirm_delete',
      'multi_input',
      'failing_job',
      'protocol_error_job',
      'test_tool_with_task',
      'chaos_load',
    ),
    args: fc.oneof(
      fc.constantFrom({}, { seconds: 0.01 }, { steps: 1, ms: 1 }, { filename: 'f' }, { n: 1 }),
      toolArgsArb,
    ),
    method: fc.constantFrom('tasks/get', 'tasks/update', 'tasks/cancel', 'subscriptions/listen'),
    responses: inputResponsesArb,
    caps: fc.constantFrom(
      TASK_CAPS,
      { extensions: { [TASKS_EXT]: {} } },
      {},
      { extensions: { [TASKS_EXT]: true } },
    ),
  });
}

function buildArbitraries(model, taskIds) {
  const arbs = model.fuzzArbitraries(chaosSurface(model, taskIds));
  return {
    ...arbs,
    rawArb: rawArb(arbs.validRequestArb),
    taskCallArb: taskCallArb(model.toolArgsArb, arbs.inputResponsesArb),
  };
}

// ---------------------------------------------------------------------------------------------------------

export async function runFuzz({ params, scope, seed, progress }) {
  const inv = new Invariants();
  for (const [name, description] of Object.entries(FUZZ_INVARIANTS)) inv.define(name, description);
  const rng = makeRng(seed);
  const started = now();
  const dir = scope.tempDir('durable-mcp-chaos-fuzz-');
  const [model, http, protocol, { validateMessage }] = await loadTestSupport(dir, [
    'fuzz-model',
    'http',
    'protocol',
    'schema',
  ]);
  const { CORRECT_PLAN, headersFor, isObject } = model;
  const envelopeMeta = (caps = TASK_CAPS) => ({
    [protocol.META_PROTOCOL_VERSION]: PROTOCOL_VERSION,
    [protocol.META_CLIENT_CAPABILITIES]: caps,
  });
  const server = startServe(
    scope,
    [
      ...COMMON_SERVE_FLAGS,
      '--store',
      join(dir, 'tasks.db'),
      '--tools',
      `conformance,${CHAOS_TOOLS}`,
      '--keep-alive-ms',
      '0',
      '--concurrency',
      '4',
      '--log-level',
      'fatal',
    ],
    { nodeArgs: params.heapMb ? [`--max-old-space-size=${params.heapMb}`] : [] },
  );
  await server.started;
  const url = server.url;
  const stats = {
    requests: 0,
    byKind: {},
    statuses: {},
    failures: 0,
    rssMaxBytes: 0,
    rssStartBytes: rssOf(server.pid),
    healthChecks: 0,
    slowSockets: 0,
    slowHealthMs: [],
  };

  // Real task ids for the tasks surface: some waiting for input, some finished.
  const taskIds = [];
  for (let i = 0; i < 6; i++) {
    const r = await rpc(url, 'tools/call', {
      name: 'chaos_job',
      arguments: { steps: 1, inputs: i % 2, ms: 0 },
    });
    if (r.result?.taskId !== undefined) taskIds.push(r.result.taskId);
  }
  if (taskIds.length === 0) throw new Error(`could not create tasks for the fuzz run`);
  const arbs = buildArbitraries(model, taskIds);

  const failures = [];
  const noteFailure = (kind, outcome) => {
    stats.failures += 1;
    if (outcome.fiveXX) inv.fail('no-5xx', `${kind}: ${outcome.why}\n${outcome.detail}`);
    else inv.fail('schema-valid', `${kind}: ${outcome.why}\n${outcome.detail}`);
    if (failures.length < 20) failures.push({ kind, ...outcome });
  };

  const exchange = async (kind, body, headers) => {
    const sent = model.sentOf(body);
    let res;
    try {
      res = await http.post(url, body, headers, { timeoutMs: 20_000, sseTimeoutMs: 150 });
    } catch (err) {
      // A reset while uploading an oversized body is an acceptable refusal; anything else means trouble.
      const why = String(err?.cause?.code ?? err?.cause ?? err);
      if (kind === 'oversize' && /ECONNRESET|EPIPE|other side closed|socket/i.test(why)) return;
      // fetch may have sent the request on a pooled connection the server was closing (after a refused
      // body, say): the same request again on a fresh connection tells a client race from a server fault.
      try {
        res = await postFresh(http, url, body, headers, { timeoutMs: 20_000, sseTimeoutMs: 150 });
        stats.freshRetries = (stats.freshRetries ?? 0) + 1;
      } catch (again) {
        noteFailure(kind, {
          why: `no answer: ${why}, then ${again?.code ?? again?.message ?? again} on a fresh connection`,
          fiveXX: false,
          detail: `request ${sent.label}\nheaders ${JSON.stringify(headers).slice(0, 600)}`,
        });
        return;
      }
    }
    stats.requests += 1;
    stats.statuses[res.status] = (stats.statuses[res.status] ?? 0) + 1;
    const outcome = model.check(sent, res);
    if (outcome !== undefined) noteFailure(kind, outcome);
    else {
      inv.ok('schema-valid');
      if (res.status < 500) inv.ok('no-5xx');
    }
  };

  // One generated case per call; batches are sampled lazily per kind with a seed derived from the section's.
  const batches = new Map();
  let batchSeed = seed;
  const sample = (name, arb) => {
    let b = batches.get(name);
    if (b === undefined || b.values.length === 0) {
      b = { values: fc.sample(arb, { numRuns: 200, seed: batchSeed++ }) };
      batches.set(name, b);
    }
    return b.values.pop();
  };

  const KINDS = [
    ['json', 10],
    ['bytes', 10],
    ['truncated', 10],
    ['message', 20],
    ['near-valid', 25],
    ['valid', 10],
    ['tasks', 10],
    ['raw-http', 5],
  ];
  const runOne = async (kind) => {
    stats.byKind[kind] = (stats.byKind[kind] ?? 0) + 1;
    switch (kind) {
      case 'json': {
        const value = sample('json', fc.jsonValue({ maxDepth: 4 }));
        const plan = sample('plan', arbs.headerPlan);
        return exchange(kind, JSON.stringify(value) ?? 'null', headersFor(plan, value));
      }
      case 'bytes': {
        const body = sample('bytes', arbs.bytesArb);
        const plan = sample('plan', arbs.headerPlan);
        return exchange(kind, body, headersFor(plan, undefined));
      }
      case 'truncated': {
        const req = sample('valid', arbs.validRequestArb);
        const plan = sample('plan', arbs.headerPlan);
        const text = JSON.stringify(req);
        return exchange(kind, text.slice(0, rng.int(0, text.length - 1)), headersFor(plan, req));
      }
      case 'message': {
        const msg = sample('message', arbs.messageArb);
        const plan = sample('plan', arbs.headerPlan);
        return exchange(kind, JSON.stringify(msg), headersFor(plan, msg));
      }
      case 'near-valid': {
        const base = sample('near', arbs.nearValidBaseArb);
        const mutations = sample('mutations', fc.array(arbs.mutationArb, { maxLength: 3 }));
        const { body, headers } = model.mutate(base, mutations, rng.chance(0.5));
        return exchange(kind, JSON.stringify(body), headers);
      }
      case 'valid': {
        const req = sample('valid', arbs.validRequestArb);
        const msg = { ...req, id: sample('id', model.idArb) };
        return exchange(kind, JSON.stringify(msg), headersFor(CORRECT_PLAN, msg));
      }
      case 'tasks': {
        const t = sample('tasks', arbs.taskCallArb);
        // Create a task (or try to), then hit the tasks surface with its id or a known one.
        const create = {
          jsonrpc: '2.0',
          id: rng.int(1, 1e6),
          method: 'tools/call',
          params: { name: t.tool, arguments: t.args, _meta: envelopeMeta(t.caps) },
        };
        await exchange(kind, JSON.stringify(create), headersFor(CORRECT_PLAN, create));
        const taskId = rng.pick(taskIds);
        const params =
          t.method === 'tasks/update'
            ? { taskId, inputResponses: t.responses }
            : t.method === 'subscriptions/listen'
              ? { notifications: { taskIds: [taskId, `${taskId.slice(0, -1)}x`] } }
              : { taskId };
        const msg = {
          jsonrpc: '2.0',
          id: `t${rng.int(0, 1e6)}`,
          method: t.method,
          params: { ...params, _meta: envelopeMeta(t.caps) },
        };
        return exchange(kind, JSON.stringify(msg), headersFor(CORRECT_PLAN, msg));
      }
      case 'raw-http': {
        const r = sample('raw', arbs.rawArb);
        const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
        if (r.host !== undefined) headers.host = r.host;
        const body = r.method === 'GET' || r.method === 'HEAD' ? undefined : r.body;
        if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
        let res;
        try {
          res = await rawRequest(url, { method: r.method, path: r.path, headers, body });
        } catch (err) {
          noteFailure(kind, {
            why: `no answer: ${err.message}`,
            fiveXX: false,
            detail: `${r.method} ${r.path}`,
          });
          return undefined;
        }
        stats.requests += 1;
        stats.statuses[res.status] = (stats.statuses[res.status] ?? 0) + 1;
        if (res.status >= 500) {
          noteFailure(kind, {
            why: `5xx answer (${res.status})`,
            fiveXX: true,
            detail: `${r.method} ${r.path} → ${res.text.slice(0, 300)}`,
          });
          return undefined;
        }
        inv.ok('no-5xx');
        // JSON-RPC bodies (errors of the endpoint) must be valid messages.
        if (String(res.headers['content-type'] ?? '').startsWith('application/json') && res.text.length > 0) {
          let msg;
          try {
            msg = JSON.parse(res.text);
          } catch {
            noteFailure(kind, {
              why: 'invalid JSON body',
              fiveXX: false,
              detail: `${r.method} ${r.path} → ${res.text.slice(0, 300)}`,
            });
            return undefined;
          }
          if (isObject(msg) && msg.jsonrpc === '2.0') {
            const errors = validateMessage(msg);
            if (errors.length > 0) {
              noteFailure(kind, {
                why: `schema: ${errors.join('; ')}`,
                fiveXX: false,
                detail: `${r.method} ${r.path} ${r.body ?? ''} → ${res.status} ${res.text.slice(0, 300)}`,
              });
              return undefined;
            }
          }
        }
        inv.ok('schema-valid');
        return undefined;
      }
    }
    return undefined;
  };

  // Pathological sizes: a fixed table, spread over the run.
  const DEPTH = 10_000;
  const meta = envelopeMeta({ elicitation: {}, sampling: {} });
  const pathological = [
    ['deep array', `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`],
    ['deep object', `${'{"a":'.repeat(DEPTH)}1${'}'.repeat(DEPTH)}`],
    [
      'deep array in arguments',
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'test_simple_text', arguments: { x: '__P__' }, _meta: meta },
      }).replace('"__P__"', `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`),
    ],
    [
      '1 MB string id',
      JSON.stringify({
        jsonrpc: '2.0',
        id: 'x'.repeat(1_000_000),
        method: 'tools/list',
        params: { _meta: meta },
      }),
    ],
    [
      '~1 MB non-ASCII argument',
      JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'chaos_job', arguments: { cid: 'ü€😀'.repeat(100_000) }, _meta: envelopeMeta() },
      }),
    ],
    [
      '1 MB task id',
      JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'tasks/get',
        params: { taskId: `task_${'A'.repeat(1_000_000)}`, _meta: envelopeMeta() },
      }),
    ],
    [
      '1 MB input answer',
      JSON.stringify({
        jsonrpc: '2.0',
        id: 4,
        method: 'tasks/update',
        params: {
          taskId: taskIds[1] ?? taskIds[0],
          inputResponses: { k0: { action: 'accept', content: { v: 'y'.repeat(1_000_000) } } },
          _meta: envelopeMeta(),
        },
      }),
    ],
  ];
  const oversize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/list',
    params: { pad: 'y'.repeat(5_000_000) },
  });
  const runPathological = async (i) => {
    const [name, text] = pathological[i % pathological.length];
    stats.byKind.pathological = (stats.byKind.pathological ?? 0) + 1;
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const headers = headersFor(CORRECT_PLAN, parsed);
    await exchange(`pathological: ${name}`, text, headers);
    if (i % 5 === 0) {
      stats.byKind.oversize = (stats.byKind.oversize ?? 0) + 1;
      await exchange('oversize', oversize, {
        'mcp-method': 'tools/list',
        'mcp-protocol-version': PROTOCOL_VERSION,
      });
    }
  };

  const rssTrail = [];
  const health = async () => {
    const h = await httpGet(url, '/healthz', { timeoutMs: 5_000 });
    stats.healthChecks += 1;
    inv.expect(
      'no-crash',
      h.status === 200 && !server.dead,
      () =>
        `/healthz after ${stats.requests} requests: ${h.netError ?? h.status}${server.dead ? `; the server exited: ${crashExcerpt(server.stderr())}` : ''}`,
    );
    const rss = rssOf(server.pid);
    if (rss !== undefined) {
      stats.rssMaxBytes = Math.max(stats.rssMaxBytes, rss);
      rssTrail.push(rss);
    }
  };

  // ----- the generated requests
  const deadline = started + params.boundMs - 60_000;
  const pathEvery = Math.max(200, Math.floor(params.requests / 300));
  let issued = 0;
  const worker = async () => {
    while (stats.requests < params.requests && now() < deadline && !server.dead && !scope.closed) {
      const n = issued++;
      if (n % pathEvery === pathEvery - 1) await runPathological(Math.floor(n / pathEvery));
      else await runOne(rng.weighted(KINDS));
      if (n % 500 === 0) {
        await health();
        progress?.(
          `${fmtInt(stats.requests)}/${fmtInt(params.requests)} requests, ${stats.failures} failures, rss ${fmtMb(rssOf(server.pid))}`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: params.parallel }, worker));
  await health();
  inv.expect(
    'volume',
    stats.requests >= params.requests,
    `only ${stats.requests} of ${params.requests} requests within the time bound`,
  );

  // ----- slowloris: connections that trickle their headers or body, while /healthz and tools/list must answer
  progress?.(`slowloris: ${params.slowSockets} sockets`);
  const target = new URL(url);
  const sockets = [];
  for (let i = 0; i < params.slowSockets; i++) {
    const s = netConnect(Number(target.port), target.hostname);
    s.on('error', () => undefined);
    sockets.push(s);
    const half = i % 2 === 0;
    s.write(
      half
        ? `POST /mcp HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/json\r\n`
        : `POST /mcp HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\nMcp-Method: tools/list\r\nMCP-Protocol-Version: ${PROTOCOL_VERSION}\r\n\r\n{"jsonrpc":"2.0",`,
    );
  }
  stats.slowSockets = sockets.length;
  const slowEnd = now() + params.slowMs;
  let tick = 0;
  while (now() < slowEnd) {
    tick += 1;
    for (const [i, s] of sockets.entries()) {
      if (!s.destroyed) s.write(i % 2 === 0 ? `X-Slow-${tick}: ${'a'.repeat(8)}\r\n` : ' ');
    }
    const [h, list] = await Promise.all([
      httpGet(url, '/healthz', { timeoutMs: 5_000 }),
      rpc(url, 'tools/list', {}, { timeoutMs: 5_000 }),
    ]);
    stats.slowHealthMs.push(Math.max(h.ms, list.ms));
    inv.expect(
      'slowloris',
      h.status === 200 && list.result !== undefined && h.ms < 2_000 && list.ms < 2_000,
      () =>
        `during slowloris: /healthz ${h.netError ?? h.status} in ${Math.round(h.ms)} ms, tools/list ${list.netError ?? 'ok'} in ${Math.round(list.ms)} ms`,
    );
    await sleep(500);
  }
  stats.slowClosedByServer = sockets.filter((s) => s.destroyed || s.readableEnded).length;
  for (const s of sockets) s.destroy();
  await sleep(200);
  await health();

  const rss = rssOf(server.pid);
  stats.rssEndBytes = rss;
  inv.expect(
    'bounded-memory',
    stats.rssMaxBytes <= params.rssLimitMb * 1048576,
    `server RSS reached ${fmtMb(stats.rssMaxBytes)} (limit ${params.rssLimitMb} MB)`,
  );
  inv.expect('no-crash', !server.dead, () => `the server exited: ${crashExcerpt(server.stderr())}`);
  // Ten evenly spaced samples of the resident set over the run (is it levelling off or climbing?).
  stats.rssSamples = Array.from(
    { length: 10 },
    (_, i) => rssTrail[Math.floor(((rssTrail.length - 1) * i) / 9)],
  ).filter((v) => v !== undefined);
  stats.slowHealthP99 = percentile(stats.slowHealthMs, 99);
  delete stats.slowHealthMs;
  stats.examples = failures.slice(0, 5).map((f) => `${f.kind}: ${f.why}`);
  stats.durationMs = now() - started;
  stats.summaryLine = `${fmtInt(stats.requests)} generated requests (${Object.entries(stats.byKind)
    .map(([k, n]) => `${k} ${fmtInt(n)}`)
    .join(
      ', ',
    )}), ${stats.failures} failures, RSS max ${fmtMb(stats.rssMaxBytes)}, slowloris ${stats.slowSockets} sockets (p99 ${fmtMs(stats.slowHealthP99)})`;
  return { inv, stats };
}
