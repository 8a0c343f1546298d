// Section 3, bad input: property-based fuzzing of the whole HTTP surface of a real `serve` process (conformance
// tools, the tasks extension and the chaos tools on a SQLite store), at volume. The generators follow
// test/e2e/fuzz.test.ts (random JSON, strings and invalid UTF-8, truncated and near-valid requests, random ids,
// methods, params, _meta and header sets), extended with the tasks surface (real and forged task ids), other HTTP
// methods and paths, pathological sizes (10k-deep nesting, ~1 MB strings, bodies over the limit) and a slowloris
// phase. Every reply is checked by the oracle of fuzz.test.ts against the official schema (test/support/schema.ts,
// transpiled on the fly), the server must never answer 5xx or die, and its memory must stay bounded.
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
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

const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
const TASKS_EXT = 'io.modelcontextprotocol/tasks';

// ---------------------------------------------------------------------------------------------------------
// The schema validator of the unit and e2e tests, transpiled to plain JavaScript at run time.

export async function loadValidator(dir) {
  const ts = (await import('typescript')).default;
  const srcPath = join(ROOT, 'test', 'support', 'schema.ts');
  const out = ts.transpileModule(readFileSync(srcPath, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  const ajv = import.meta.resolve('ajv/dist/2020.js');
  const text = out
    .replace(/from ['"]ajv\/dist\/2020\.js['"]/, `from ${JSON.stringify(ajv)}`)
    .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(srcPath).href));
  const file = join(dir, 'schema.mjs');
  writeFileSync(file, text);
  return import(pathToFileURL(file).href);
}

// ---------------------------------------------------------------------------------------------------------
// HTTP (fetch for the JSON-RPC endpoint, like fuzz.test.ts; node:http for other methods)

const DEFAULT_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function mergeHeaders(headers) {
  const out = new globalThis.Headers();
  const merged = { ...DEFAULT_HEADERS };
  for (const [k, v] of Object.entries(headers)) merged[k.toLowerCase()] = v;
  for (const [k, v] of Object.entries(merged)) {
    if (v === undefined) continue;
    if (typeof v === 'string') out.set(k, v);
    else for (const item of v) out.append(k, item);
  }
  return out;
}

function parseSse(text) {
  const messages = [];
  let jsonError;
  for (const block of text.replace(/\r\n?/g, '\n').split('\n\n')) {
    const data = block
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''));
    if (data.length === 0) continue;
    try {
      messages.push(JSON.parse(data.join('\n')));
    } catch (err) {
      jsonError ??= `invalid JSON in SSE data: ${String(err)}`;
    }
  }
  return { messages, jsonError };
}

async function post(url, body, headers, { timeoutMs = 15_000, sseTimeoutMs = 150 } = {}) {
  const controller = new AbortController();
  let timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: mergeHeaders(headers),
      body,
      signal: controller.signal,
    });
    const contentType = res.headers.get('content-type') ?? '';
    if (contentType.startsWith('text/event-stream')) {
      clearTimeout(timer);
      timer = setTimeout(() => controller.abort(), sseTimeoutMs);
    }
    const chunks = [];
    let truncated = false;
    if (res.body !== null) {
      const reader = res.body.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          chunks.push(value);
        }
      } catch (err) {
        if (!controller.signal.aborted || !contentType.startsWith('text/event-stream')) throw err;
        truncated = true;
      }
    }
    const text = Buffer.concat(chunks).toString('utf8');
    let messages = [];
    let jsonError;
    if (contentType.startsWith('text/event-stream')) ({ messages, jsonError } = parseSse(text));
    else if (text.length > 0) {
      try {
        messages = [JSON.parse(text)];
      } catch (err) {
        jsonError = `invalid JSON body: ${String(err)}`;
      }
    }
    return { status: res.status, headers: res.headers, text, messages, jsonError, truncated, contentType };
  } finally {
    clearTimeout(timer);
  }
}

/** Like post(), over node:http on a connection of its own (no pooling). */
function postFresh(url, body, headers, { timeoutMs = 15_000, sseTimeoutMs = 150 } = {}) {
  const target = new URL(url);
  const merged = { ...DEFAULT_HEADERS };
  for (const [k, v] of Object.entries(headers)) merged[k.toLowerCase()] = v;
  const out = {};
  for (const [k, v] of Object.entries(merged))
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
          let messages = [];
          let jsonError;
          if (contentType.startsWith('text/event-stream')) ({ messages, jsonError } = parseSse(text));
          else if (text.length > 0) {
            try {
              messages = [JSON.parse(text)];
            } catch (err) {
              jsonError = `invalid JSON body: ${String(err)}`;
            }
          }
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
// The oracle (test/e2e/fuzz.test.ts)

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const isRequestId = (v) => typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v));
const PINNED_STATUS = { [-32700]: 400, [-32601]: 404, [-32020]: 400, [-32021]: 400, [-32022]: 400 };
const MAX_READ_DEPTH = 64;

function nestingDepth(value) {
  let max = 0;
  const stack = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    max = Math.max(max, d + 1);
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}

const tasksNegotiated = (body) => {
  const caps =
    isObject(body) && isObject(body.params) && isObject(body.params._meta)
      ? body.params._meta[META_CLIENT_CAPABILITIES]
      : undefined;
  return isObject(caps) && isObject(caps.extensions) && isObject(caps.extensions[TASKS_EXT]);
};

/** Returns undefined when the exchange is fine, else why not (`fiveXX` set for a 5xx). */
export function check(validateMessage, sent, res) {
  const problems = [];
  const fail = (why) => {
    problems.push(why);
    throw Object.assign(new Error(why), { fiveXX: res.status >= 500 });
  };
  try {
    if (res.status >= 500) fail(`5xx answer (${res.status})`);
    if (res.headers.get('mcp-session-id') !== null) fail('Mcp-Session-Id returned');
    const body = sent.parsed;
    const isNotification =
      isObject(body) &&
      body.jsonrpc === '2.0' &&
      typeof body.method === 'string' &&
      body.method !== '' &&
      !('id' in body) &&
      !('result' in body) &&
      !('error' in body) &&
      (body.params === undefined || isObject(body.params));
    if (res.status === 202) {
      if (res.text !== '') fail('202 with a body');
      if (!isNotification) fail('202 for something that is not a notification');
      return undefined;
    }
    if ([403, 405, 413, 415].includes(res.status)) {
      for (const msg of res.messages) {
        const errors = validateMessage(msg);
        if (errors.length > 0) fail(`invalid ${res.status} body: ${errors.join('; ')}`);
      }
      return undefined;
    }
    if (isNotification) fail(`notification answered with ${res.status} instead of 202`);
    if (res.jsonError !== undefined) fail(res.jsonError);
    if (res.messages.length === 0) fail('no JSON-RPC message in the body');
    const method = isObject(body) && typeof body.method === 'string' ? body.method : undefined;
    const negotiated = tasksNegotiated(body);
    for (const msg of res.messages) {
      const errors = validateMessage(msg, { method, tasksNegotiated: negotiated });
      if (errors.length > 0) fail(`schema: ${errors.join('; ')}`);
    }
    const last = res.messages[res.messages.length - 1];
    const isResponse = 'result' in last || 'error' in last;
    if (!res.truncated && !isResponse) fail('the last message is not the response');
    for (const msg of res.messages.slice(0, isResponse ? -1 : undefined)) {
      if ('result' in msg || 'error' in msg) fail('a response before the end of the stream');
    }
    if (res.truncated && method !== 'subscriptions/listen') fail('a stream that never ended');
    checkNotifications(body, method, res.messages.slice(0, isResponse ? -1 : undefined), fail);
    if (!isResponse) return undefined;
    if ('error' in last) {
      const code = last.error.code;
      const pinned = PINNED_STATUS[code];
      if (pinned !== undefined && res.status !== pinned)
        fail(`error ${code} with HTTP ${res.status}, expected ${pinned}`);
    } else if (res.status !== 200) {
      fail(`a result with HTTP ${res.status}`);
    }
    if (isObject(body) && 'id' in body && isRequestId(body.id)) {
      const refusedUnread = !('id' in last) && 'error' in last && nestingDepth(body) > MAX_READ_DEPTH;
      if (last.id !== body.id && !refusedUnread) fail(`id not echoed (sent ${JSON.stringify(body.id)})`);
    } else if ('id' in last && !(isObject(body) && isRequestId(body.id))) {
      fail('a response id although the request id was unreadable');
    }
    return undefined;
  } catch (err) {
    if (problems.length === 0) throw err;
    return {
      why: problems[0],
      fiveXX: res.status >= 500,
      detail: `request ${sent.label.slice(0, 400)}\n→ ${res.status} ${res.contentType} ${res.text.slice(0, 600)}`,
    };
  }
}

function checkNotifications(body, method, notes, fail) {
  if (notes.length === 0) return;
  const params = isObject(body) && isObject(body.params) ? body.params : {};
  const meta = isObject(params._meta) ? params._meta : {};
  const id = isObject(body) ? body.id : undefined;
  notes.forEach((note, index) => {
    const noteMeta = isObject(note.params) && isObject(note.params._meta) ? note.params._meta : {};
    const subscriptionId = noteMeta[META_SUBSCRIPTION_ID];
    if (method === 'subscriptions/listen') {
      if (index === 0 && note.method !== 'notifications/subscriptions/acknowledged')
        fail('listen stream without ack');
      if (subscriptionId !== id) fail(`subscriptionId ${JSON.stringify(subscriptionId)} ≠ listen id`);
      if (note.method === 'notifications/progress' || note.method === 'notifications/message') {
        fail(`${String(note.method)} on a listen stream`);
      }
      return;
    }
    if (subscriptionId !== undefined) fail('subscriptionId on a request-scoped notification');
    if (note.method === 'notifications/progress') {
      const token = isObject(note.params) ? note.params.progressToken : undefined;
      if (meta.progressToken === undefined || token !== meta.progressToken)
        fail('progress without a matching progressToken');
    } else if (note.method === 'notifications/message') {
      if (meta[META_LOG_LEVEL] === undefined) fail('notifications/message without a logLevel');
    } else {
      fail(`unexpected ${String(note.method)} on a request stream`);
    }
  });
}

// ---------------------------------------------------------------------------------------------------------
// Arbitraries (after test/e2e/fuzz.test.ts, plus the tasks surface)

const TOOLS = [
  'test_simple_text',
  'test_image_content',
  'test_audio_content',
  'test_embedded_resource',
  'test_multiple_content_types',
  'test_error_handling',
  'test_tool_with_progress',
  'json_schema_2020_12_tool',
  'test_custom_header',
  'test_missing_capability',
  'test_streaming_elicitation',
  'test_logging_tool',
  'test_trigger_tool_change',
  'test_trigger_prompt_change',
  'test_input_required_result_elicitation',
  'test_input_required_result_sampling',
  'test_input_required_result_list_roots',
  'test_input_required_result_request_state',
  'test_input_required_result_multiple_inputs',
  'test_input_required_result_multi_round',
  'test_input_required_result_tampered_state',
  'test_input_required_result_capabilities',
  // tasks extension (conformance and chaos sets)
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
const PROMPTS = [
  'test_simple_prompt',
  'test_prompt_with_arguments',
  'test_prompt_with_embedded_resource',
  'test_prompt_with_image',
  'test_input_required_result_prompt',
];
const METHODS = [
  'server/discover',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'completion/complete',
  'subscriptions/listen',
  'tasks/get',
  'tasks/update',
  'tasks/cancel',
];
const OTHER_METHODS = [
  'initialize',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
  'tasks/result',
  'tasks/list',
  'notifications/cancelled',
  'notifications/initialized',
  'sampling/createMessage',
  'elicitation/create',
  'roots/list',
  'TOOLS/LIST',
  'tools/list ',
  'tasks/get ',
];
const PROTOTYPE_NAMES = [
  'constructor',
  '__proto__',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'isPrototypeOf',
];
const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

const sentinel = (value) => `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;

function nameFor(method, params) {
  const value =
    method === 'tools/call' || method === 'prompts/get'
      ? params.name
      : method === 'resources/read'
        ? params.uri
        : method.startsWith('tasks/')
          ? params.taskId
          : undefined;
  return typeof value === 'string' ? value : undefined;
}

function buildArbitraries(taskIds) {
  const headerChar = fc
    .oneof(
      { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
      { weight: 1, arbitrary: fc.constant(0x09) },
      { weight: 1, arbitrary: fc.integer({ min: 0xa0, max: 0xff }) },
    )
    .map((c) => String.fromCharCode(c));
  const headerText = fc.string({ unit: headerChar, maxLength: 40 });
  const sentinelLooking = fc.oneof(
    fc.constantFrom(
      '=?base64??=',
      '=?base64?=?=',
      '=?base64?!!!!?=',
      '=?base64?dGVzdA?=',
      '=?base64?dGVzdA==?=',
      '=?BASE64?dGVzdA==?=',
      '=?base64?dGVzdF9zaW1wbGVfdGV4dA==?=',
      '=?base64?dG9vbHMvY2FsbA==?=',
      '=?base64?/w==?=',
      '=?base64?gA==?=',
      '=?base64?7aCA?=',
      '=?base64?PT9iYXNlNjQ/Pz0=?=',
      '=?base64?',
      '?=',
    ),
    fc.string({ maxLength: 20 }).map(sentinel),
    fc.base64String({ maxLength: 24 }).map((b) => `=?base64?${b}?=`),
  );
  const forgedTaskId = fc.oneof(
    fc.constantFrom(...taskIds),
    fc
      .string({
        unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-'),
        minLength: 32,
        maxLength: 32,
      })
      .map((s) => `task_${s}`),
    fc.string({ maxLength: 40 }),
    fc.constantFrom('', 'task_', `${taskIds[0]}x`, taskIds[0].toUpperCase(), ...PROTOTYPE_NAMES),
  );
  const randomHeaderValue = fc.oneof(
    headerText,
    sentinelLooking,
    fc.constantFrom(
      '2026-07-28',
      '2025-11-25',
      'DRAFT-2026-V1',
      '',
      ' ',
      'null',
      ...METHODS,
      ...OTHER_METHODS,
      ...TOOLS,
    ),
    fc.constantFrom(...taskIds),
  );
  const headerChoice = fc.oneof(
    { weight: 2, arbitrary: fc.constant({ kind: 'omit' }) },
    { weight: 6, arbitrary: fc.constant({ kind: 'correct' }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'sentinel' }) },
    { weight: 2, arbitrary: randomHeaderValue.map((value) => ({ kind: 'random', value })) },
    {
      weight: 1,
      arbitrary: fc
        .record({
          values: fc.array(randomHeaderValue, { minLength: 1, maxLength: 2 }),
          withCorrect: fc.boolean(),
        })
        .map((r) => ({ kind: 'dup', ...r })),
    },
  );
  const headerPlan = fc.record({
    version: headerChoice,
    method: headerChoice,
    name: headerChoice,
    region: headerChoice,
    extra: fc.array(
      fc.tuple(
        fc.constantFrom(
          'mcp-session-id',
          'last-event-id',
          'mcp-param-region',
          'mcp-param-x',
          'accept',
          'authorization',
        ),
        headerText,
      ),
      { maxLength: 2 },
    ),
    contentType: fc.oneof(
      { weight: 12, arbitrary: fc.constant(null) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          undefined,
          'application/json; charset=utf-8',
          'application/vnd.example+json',
          'text/plain',
          'application/x-www-form-urlencoded',
          'APPLICATION/JSON',
        ),
      },
    ),
    origin: fc.oneof(
      { weight: 12, arbitrary: fc.constant(undefined) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          'http://localhost:3000',
          'https://evil.example',
          'null',
          'http://127.0.0.1',
        ),
      },
    ),
  });
  const idArb = fc.oneof(
    { weight: 4, arbitrary: fc.integer() },
    { weight: 4, arbitrary: fc.string({ maxLength: 16 }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(null, 0, -0, 1.5, 2 ** 53, -(2 ** 53), 1e21, true, '', '0', ' '),
    },
    { weight: 1, arbitrary: fc.double() },
    { weight: 1, arbitrary: fc.oneof(fc.object({ maxDepth: 1 }), fc.array(fc.integer(), { maxLength: 2 })) },
  );
  const capsArb = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record(
        {
          elicitation: fc.constantFrom({}, { form: {} }, { url: {} }, { form: {}, url: {} }, { form: 1 }, []),
          sampling: fc.constantFrom({}, { tools: {} }, true),
          roots: fc.constantFrom({}, 'yes'),
          experimental: fc.constantFrom({}, { x: {} }),
          extensions: fc.constantFrom({}, { [TASKS_EXT]: {} }, { [TASKS_EXT]: 1 }, { [TASKS_EXT]: {} }),
        },
        { requiredKeys: [] },
      ),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  );
  const metaArb = fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .record(
          {
            version: fc.oneof(
              { weight: 8, arbitrary: fc.constant(PROTOCOL_VERSION) },
              { weight: 1, arbitrary: fc.constantFrom('2025-11-25', '', 'DRAFT-2026-V1', 2026) },
              { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
            ),
            caps: capsArb,
            clientInfo: fc.constantFrom(undefined, { name: 'fuzz', version: '1' }, { name: 'fuzz' }, 'fuzz', {
              name: 1,
              version: 2,
            }),
            logLevel: fc.oneof(
              { weight: 4, arbitrary: fc.constant(undefined) },
              { weight: 2, arbitrary: fc.constantFrom(...LOG_LEVELS) },
              {
                weight: 1,
                arbitrary: fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.constant(null)),
              },
            ),
            progressToken: fc.oneof(
              { weight: 4, arbitrary: fc.constant(undefined) },
              { weight: 2, arbitrary: fc.oneof(fc.string({ maxLength: 8 }), fc.integer()) },
              {
                weight: 1,
                arbitrary: fc.oneof(fc.double(), fc.constant(null), fc.constant({}), fc.constant(true)),
              },
            ),
            drop: fc.constantFrom(undefined, 'version', 'caps'),
            extra: fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }),
          },
          { requiredKeys: ['version', 'caps', 'drop', 'extra'] },
        )
        .map((m) => {
          const out = { ...m.extra };
          if (m.drop !== 'version') out[META_PROTOCOL_VERSION] = m.version;
          if (m.drop !== 'caps') out[META_CLIENT_CAPABILITIES] = m.caps;
          if (m.clientInfo !== undefined) out[META_CLIENT_INFO] = m.clientInfo;
          if (m.logLevel !== undefined) out[META_LOG_LEVEL] = m.logLevel;
          if (m.progressToken !== undefined) out.progressToken = m.progressToken;
          return out;
        }),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
  const uriArb = fc.oneof(
    fc.constantFrom(
      'test://static-text',
      'test://static-binary',
      'test://example-resource',
      'test://nope',
      '',
    ),
    fc.string({ maxLength: 12 }).map((s) => `test://template/${encodeURIComponent(s) || 'x'}/data`),
    fc.string({ maxLength: 12 }),
  );
  const inputResponsesArb = fc.oneof(
    fc.constantFrom(
      { user_name: { action: 'accept', content: { name: 'Ada' } } },
      { favorite_color: { action: 'accept', content: { color: 'red' } } },
      { confirm: { action: 'decline' } },
      { capital_question: { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'm' } },
      { client_roots: { roots: [{ uri: 'file:///tmp' }] } },
      { k0: { action: 'accept', content: { v: 'fuzz' } } },
      { k0: { action: 'accept', content: 'not an object' } },
      { go: { action: 'cancel' } },
      { confirm_delete: { action: 'accept', content: { confirm: true } } },
      { x: 1 },
      [],
    ),
    fc.jsonValue({ maxDepth: 3 }),
  );
  const toolArgsArb = fc.oneof(
    fc.constantFrom(
      undefined,
      {},
      { region: 'eu' },
      { name: 'n', email: 'e' },
      { contactMethod: 'phone' },
      null,
      [],
      'x',
    ),
    fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  );
  const sometimes = (arb, absent = 3) =>
    fc.oneof({ weight: absent, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
  const compact = (obj) => Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined));
  const argsForTool = {
    test_custom_header: fc.record({ region: fc.string({ maxLength: 12 }) }),
    json_schema_2020_12_tool: fc.oneof(
      fc.record({ name: fc.string({ maxLength: 6 }), email: fc.string({ maxLength: 12 }) }),
      fc.record({ contactMethod: fc.constant('phone'), phone: fc.string({ maxLength: 8 }) }),
    ),
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
  const paramsFor = (method) => {
    switch (method) {
      case 'tools/call':
        return fc
          .oneof(
            { weight: 6, arbitrary: fc.constantFrom(...TOOLS) },
            {
              weight: 2,
              arbitrary: fc.constantFrom(
                'test_tool_with_progress',
                'test_logging_tool',
                'chaos_job',
                'slow_compute',
              ),
            },
            {
              weight: 1,
              arbitrary: fc.oneof(
                fc.string({ maxLength: 12 }),
                fc.constantFrom(...PROTOTYPE_NAMES),
                fc.integer(),
              ),
            },
          )
          .chain((name) =>
            fc
              .record({
                arguments: fc.oneof(
                  {
                    weight: 3,
                    arbitrary:
                      typeof name === 'string' && Object.hasOwn(argsForTool, name)
                        ? argsForTool[name]
                        : fc.constant({}),
                  },
                  { weight: 1, arbitrary: toolArgsArb },
                ),
                inputResponses: sometimes(inputResponsesArb),
                requestState: sometimes(
                  fc.oneof(fc.string({ maxLength: 40 }), fc.base64String({ maxLength: 80 }), fc.integer()),
                  6,
                ),
              })
              .map((rest) => compact({ name, ...rest })),
          );
      case 'prompts/get':
        return fc
          .record({
            name: fc.oneof(
              { weight: 4, arbitrary: fc.constantFrom(...PROMPTS) },
              {
                weight: 1,
                arbitrary: fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom(...PROTOTYPE_NAMES)),
              },
            ),
            arguments: fc.oneof(
              fc.constantFrom(
                { arg1: 'a', arg2: 'b' },
                { resourceUri: 'test://x' },
                { arg1: 1 },
                {},
                undefined,
              ),
              fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }), { maxKeys: 3 }),
            ),
            inputResponses: sometimes(inputResponsesArb),
            requestState: sometimes(fc.string({ maxLength: 40 }), 6),
          })
          .map(compact);
      case 'resources/read':
        return fc
          .record({
            uri: fc.oneof({ weight: 6, arbitrary: uriArb }, { weight: 1, arbitrary: fc.integer() }),
            requestState: sometimes(fc.string({ maxLength: 20 }), 6),
          })
          .map(compact);
      case 'tools/list':
      case 'prompts/list':
      case 'resources/list':
      case 'resources/templates/list':
        return fc.record(
          {
            cursor: fc.oneof(
              fc.constantFrom('bzA', 'bzE', 'bzE1', 'bzk5OTk5OTk5OQ', ''),
              fc.string({ maxLength: 10 }),
              fc.integer(),
            ),
          },
          { requiredKeys: [] },
        );
      case 'completion/complete':
        return fc.record(
          {
            ref: fc.oneof(
              fc.constantFrom(
                { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
                { type: 'ref/prompt', name: 'test_simple_prompt' },
                { type: 'ref/resource', uri: 'test://template/{id}/data' },
                { type: 'ref/resource', uri: 'test://nope' },
                { type: 'ref/other' },
              ),
              fc.jsonValue({ maxDepth: 1 }),
            ),
            argument: fc.oneof(
              fc.record({
                name: fc.oneof(
                  fc.constantFrom('arg1', 'arg2', 'id', 'resourceUri', ...PROTOTYPE_NAMES),
                  fc.string({ maxLength: 6 }),
                ),
                value: fc.oneof(fc.string({ maxLength: 6 }), fc.integer()),
              }),
              fc.jsonValue({ maxDepth: 1 }),
            ),
            context: fc.oneof(
              fc.constantFrom({ arguments: { arg1: 'x' } }, { arguments: 1 }),
              fc.jsonValue({ maxDepth: 2 }),
            ),
          },
          { requiredKeys: ['ref', 'argument'] },
        );
      case 'subscriptions/listen':
        return fc.record(
          {
            notifications: fc.oneof(
              fc.record(
                {
                  toolsListChanged: fc.constantFrom(true, false, 'yes'),
                  promptsListChanged: fc.boolean(),
                  resourcesListChanged: fc.boolean(),
                  resourceSubscriptions: fc.oneof(
                    fc.array(uriArb, { maxLength: 2 }),
                    fc.constant('test://static-text'),
                  ),
                  taskIds: fc.oneof(
                    fc.array(forgedTaskId, { maxLength: 3 }),
                    fc.constant('x'),
                    fc.array(fc.integer(), { maxLength: 2 }),
                  ),
                },
                { requiredKeys: [] },
              ),
              fc.jsonValue({ maxDepth: 1 }),
            ),
          },
          { requiredKeys: [] },
        );
      case 'tasks/get':
      case 'tasks/cancel':
        return fc.record(
          {
            taskId: fc.oneof(
              { weight: 4, arbitrary: forgedTaskId },
              { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
            ),
          },
          { requiredKeys: [] },
        );
      case 'tasks/update':
        return fc.record(
          {
            taskId: fc.oneof(
              { weight: 4, arbitrary: forgedTaskId },
              { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
            ),
            inputResponses: fc.oneof(
              { weight: 4, arbitrary: inputResponsesArb },
              { weight: 1, arbitrary: fc.constant(undefined) },
            ),
          },
          { requiredKeys: [] },
        );
      default:
        return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
    }
  };
  const methodArb = fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom(...METHODS) },
    { weight: 3, arbitrary: fc.constantFrom(...OTHER_METHODS) },
    { weight: 1, arbitrary: fc.constantFrom(...PROTOTYPE_NAMES) },
    { weight: 2, arbitrary: fc.string({ maxLength: 20 }) },
  );
  const messageArb = methodArb.chain((method) =>
    fc
      .record({
        jsonrpc: fc.oneof(
          { weight: 12, arbitrary: fc.constant('2.0') },
          { weight: 1, arbitrary: fc.constantFrom('1.0', 2, undefined) },
        ),
        id: fc.oneof({ weight: 8, arbitrary: idArb }, { weight: 1, arbitrary: fc.constant(undefined) }),
        params: fc.oneof(
          { weight: 10, arbitrary: paramsFor(method) },
          { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
          { weight: 1, arbitrary: fc.constant(undefined) },
        ),
        meta: metaArb,
        extra: fc.oneof(
          { weight: 15, arbitrary: fc.constant(undefined) },
          { weight: 1, arbitrary: fc.constantFrom({ result: {} }, { error: { code: 1, message: 'x' } }) },
        ),
      })
      .map(({ jsonrpc, id, params, meta, extra }) => {
        const msg = { method };
        if (jsonrpc !== undefined) msg.jsonrpc = jsonrpc;
        if (id !== undefined) msg.id = id;
        if (isObject(params)) msg.params = meta === undefined ? params : { ...params, _meta: meta };
        else if (params !== undefined) msg.params = params;
        if (extra !== undefined) Object.assign(msg, extra);
        return msg;
      }),
  );
  const validCapsArb = fc.record(
    {
      elicitation: fc.constantFrom({}, { form: {} }, { url: {} }, { form: {}, url: {} }),
      sampling: fc.constantFrom({}, { tools: {} }),
      roots: fc.constant({}),
      extensions: fc.constantFrom({}, { [TASKS_EXT]: {} }, { [TASKS_EXT]: {} }),
    },
    { requiredKeys: [] },
  );
  const validRequestArb = fc
    .constantFrom(...METHODS.filter((m) => m !== 'subscriptions/listen'))
    .chain((method) =>
      fc
        .record({
          id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 })),
          params: paramsFor(method),
          logLevel: sometimes(fc.constantFrom(...LOG_LEVELS), 1),
          progressToken: sometimes(fc.oneof(fc.string({ maxLength: 8 }), fc.integer()), 1),
        })
        .map(({ id, params, logLevel, progressToken }) => ({
          jsonrpc: '2.0',
          id,
          method,
          params: {
            ...params,
            _meta: compact({
              [META_PROTOCOL_VERSION]: PROTOCOL_VERSION,
              [META_CLIENT_CAPABILITIES]: {
                elicitation: {},
                sampling: {},
                roots: {},
                extensions: { [TASKS_EXT]: {} },
              },
              [META_LOG_LEVEL]: logLevel,
              progressToken,
            }),
          },
        })),
    );
  const nearValidBaseArb = methodArb.chain((method) =>
    fc
      .record({
        id: fc.oneof(fc.integer(), fc.string({ maxLength: 12 })),
        params: paramsFor(method),
        caps: validCapsArb,
        logLevel: fc.option(fc.constantFrom(...LOG_LEVELS), { nil: undefined }),
        progressToken: fc.option(
          fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.double({ noNaN: true })),
          { nil: undefined },
        ),
      })
      .map(({ id, params, caps, logLevel, progressToken }) => {
        const metaObj = {
          [META_PROTOCOL_VERSION]: PROTOCOL_VERSION,
          [META_CLIENT_CAPABILITIES]: caps,
          [META_CLIENT_INFO]: { name: 'fuzz', version: '0.0.0' },
        };
        if (logLevel !== undefined) metaObj[META_LOG_LEVEL] = logLevel;
        if (progressToken !== undefined) metaObj.progressToken = progressToken;
        return { jsonrpc: '2.0', id, method, params: { ...params, _meta: metaObj } };
      }),
  );
  const valueArb = fc.oneof(
    { weight: 2, arbitrary: fc.constant(undefined) },
    { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        null,
        '',
        0,
        -1,
        1.5,
        true,
        [],
        {},
        ...PROTOTYPE_NAMES,
        'test_simple_text',
        'test://static-text',
      ),
    },
    { weight: 1, arbitrary: sentinelLooking },
  );
  const mutationArb = fc.oneof(
    idArb.map((v) => ({ k: 'id', v })),
    fc.constantFrom(undefined, '1.0', 2, null).map((v) => ({ k: 'jsonrpc', v })),
    methodArb.map((v) => ({ k: 'method', v })),
    fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined)).map((v) => ({ k: 'params', v })),
    fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined)).map((v) => ({ k: 'meta', v })),
    fc
      .record({
        key: fc.oneof(
          fc.constantFrom(
            'name',
            'uri',
            'arguments',
            'inputResponses',
            'requestState',
            'cursor',
            'notifications',
          ),
          fc.constantFrom('ref', 'argument', 'context', 'taskId', '__proto__', 'constructor'),
          fc.string({ maxLength: 8 }),
        ),
        v: valueArb,
      })
      .map((r) => ({ k: 'param', ...r })),
    fc
      .record({
        key: fc.oneof(
          fc.constantFrom(
            META_PROTOCOL_VERSION,
            META_CLIENT_CAPABILITIES,
            META_CLIENT_INFO,
            META_LOG_LEVEL,
            'progressToken',
          ),
          fc.constantFrom('io.modelcontextprotocol/subscriptionId', 'traceparent', '__proto__'),
          fc.string({ maxLength: 8 }),
        ),
        v: fc.oneof(valueArb, capsArb, fc.constantFrom(...LOG_LEVELS, '2025-11-25')),
      })
      .map((r) => ({ k: 'metaKey', ...r })),
    fc
      .record({
        name: fc.constantFrom(
          'mcp-protocol-version',
          'mcp-method',
          'mcp-name',
          'mcp-param-region',
          'mcp-session-id',
          'last-event-id',
          'content-type',
          'origin',
          'accept',
        ),
        v: fc.oneof(
          fc.constant(undefined),
          randomHeaderValue,
          fc.array(randomHeaderValue, { minLength: 2, maxLength: 3 }),
        ),
      })
      .map((r) => ({ k: 'header', ...r })),
    fc.constantFrom('result', 'error').map((key) => ({ k: 'responseKey', key })),
  );
  const invalidUtf8 = fc.constantFrom(
    [0xff],
    [0xfe, 0xff],
    [0x80],
    [0xc0, 0xaf],
    [0xe0, 0x80, 0xaf],
    [0xed, 0xa0, 0x80],
    [0xf4, 0x90, 0x80, 0x80],
    [0xc3],
  );
  const bytesArb = fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.string({ unit: 'binary', maxLength: 100 }),
    fc.constantFrom(
      '',
      ' ',
      '{',
      '}',
      '[',
      '{"jsonrpc":"2.0"',
      'null',
      'true',
      '"\\ud800"',
      '{"a":"\\u0000"}',
      '\ufeff{}',
    ),
    fc.uint8Array({ maxLength: 200 }),
    fc.tuple(validRequestArb, invalidUtf8, fc.nat()).map(([req, bad, at]) => {
      const text = JSON.stringify(req);
      const quote = text.indexOf('"', at % text.length);
      const cut = quote === -1 ? text.length : quote + 1;
      return Buffer.concat([Buffer.from(text.slice(0, cut)), Buffer.from(bad), Buffer.from(text.slice(cut))]);
    }),
  );
  const rawArb = fc.record({
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
  return {
    headerPlan,
    messageArb,
    validRequestArb,
    nearValidBaseArb,
    mutationArb,
    bytesArb,
    rawArb,
    idArb,
    taskCallArb: fc.record({
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
    }),
  };
}

function materialise(choice, correct) {
  switch (choice.kind) {
    case 'omit':
      return undefined;
    case 'correct':
      return correct;
    case 'sentinel':
      return correct === undefined ? undefined : sentinel(correct);
    case 'random':
      return choice.value;
    case 'dup':
      return choice.withCorrect && correct !== undefined ? [correct, ...choice.values] : choice.values;
  }
  return undefined;
}

function headersFor(plan, body) {
  const obj = isObject(body) ? body : {};
  const method = typeof obj.method === 'string' ? obj.method : undefined;
  const params = isObject(obj.params) ? obj.params : {};
  const metaObj = isObject(params._meta) ? params._meta : {};
  const version =
    typeof metaObj[META_PROTOCOL_VERSION] === 'string' ? metaObj[META_PROTOCOL_VERSION] : PROTOCOL_VERSION;
  const args = isObject(params.arguments) ? params.arguments : {};
  const region = typeof args.region === 'string' ? args.region : undefined;
  const headers = {
    'mcp-protocol-version': materialise(plan.version, version),
    'mcp-method': materialise(plan.method, method),
    'mcp-name': materialise(plan.name, method === undefined ? undefined : nameFor(method, params)),
    'mcp-param-region': materialise(plan.region, region),
  };
  for (const [k, v] of plan.extra) headers[k] = v;
  if (plan.contentType !== null) headers['content-type'] = plan.contentType;
  if (plan.origin !== undefined) headers.origin = plan.origin;
  for (const [k, v] of Object.entries(headers)) {
    if (typeof v === 'string' && !/^[\t\x20-\x7e\xa0-\xff]*$/.test(v)) delete headers[k];
    if (typeof v === 'string' && v.length > 4_000) delete headers[k];
  }
  return headers;
}

const CORRECT_PLAN = {
  version: { kind: 'correct' },
  method: { kind: 'correct' },
  name: { kind: 'correct' },
  region: { kind: 'correct' },
  extra: [],
  contentType: null,
  origin: undefined,
};

function mutate(base, mutations, nameAsSentinel) {
  const body = JSON.parse(JSON.stringify(base));
  const setOrDelete = (obj, key, v) => {
    if (v === undefined) delete obj[key];
    else Object.defineProperty(obj, key, { value: v, enumerable: true, writable: true, configurable: true });
  };
  for (const m of mutations) {
    if (m.k === 'id' || m.k === 'jsonrpc') setOrDelete(body, m.k, m.v);
    else if (m.k === 'method') body.method = m.v;
    else if (m.k === 'params') setOrDelete(body, 'params', m.v);
    else if (m.k === 'meta' && isObject(body.params)) setOrDelete(body.params, '_meta', m.v);
    else if (m.k === 'param' && isObject(body.params)) setOrDelete(body.params, m.key, m.v);
    else if (m.k === 'metaKey' && isObject(body.params) && isObject(body.params._meta))
      setOrDelete(body.params._meta, m.key, m.v);
    else if (m.k === 'responseKey')
      body[m.key] = m.key === 'result' ? { resultType: 'complete' } : { code: -32603, message: 'x' };
  }
  const headers = headersFor(
    { ...CORRECT_PLAN, name: { kind: nameAsSentinel ? 'sentinel' : 'correct' } },
    body,
  );
  for (const m of mutations) if (m.k === 'header') headers[m.name] = m.v;
  return { body, headers };
}

const envelopeMeta = (caps = TASK_CAPS) => ({
  [META_PROTOCOL_VERSION]: PROTOCOL_VERSION,
  [META_CLIENT_CAPABILITIES]: caps,
});

// ---------------------------------------------------------------------------------------------------------

export async function runFuzz({ params, scope, seed, progress }) {
  const inv = new Invariants();
  for (const [name, description] of Object.entries(FUZZ_INVARIANTS)) inv.define(name, description);
  const rng = makeRng(seed);
  const started = now();
  const dir = scope.tempDir('durable-mcp-chaos-fuzz-');
  const { validateMessage } = await loadValidator(dir);
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
  const arbs = buildArbitraries(taskIds);

  const failures = [];
  const noteFailure = (kind, outcome) => {
    stats.failures += 1;
    if (outcome.fiveXX) inv.fail('no-5xx', `${kind}: ${outcome.why}\n${outcome.detail}`);
    else inv.fail('schema-valid', `${kind}: ${outcome.why}\n${outcome.detail}`);
    if (failures.length < 20) failures.push({ kind, ...outcome });
  };

  const exchange = async (kind, body, headers) => {
    let parsed;
    try {
      const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
      parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    } catch {
      parsed = undefined;
    }
    const label =
      typeof body === 'string'
        ? body.slice(0, 300)
        : `${body.length} bytes, hex ${Buffer.from(body.subarray(0, 150)).toString('hex')}`;
    let res;
    try {
      res = await post(url, body, headers, { timeoutMs: 20_000, sseTimeoutMs: 150 });
    } catch (err) {
      // A reset while uploading an oversized body is an acceptable refusal; anything else means trouble.
      const why = String(err?.cause?.code ?? err?.cause ?? err);
      if (kind === 'oversize' && /ECONNRESET|EPIPE|other side closed|socket/i.test(why)) return;
      // fetch may have sent the request on a pooled connection the server was closing (after a refused
      // body, say): the same request again on a fresh connection tells a client race from a server fault.
      try {
        res = await postFresh(url, body, headers, { timeoutMs: 20_000, sseTimeoutMs: 150 });
        stats.freshRetries = (stats.freshRetries ?? 0) + 1;
      } catch (again) {
        noteFailure(kind, {
          why: `no answer: ${why}, then ${again?.code ?? again?.message ?? again} on a fresh connection`,
          fiveXX: false,
          detail: `request ${label}\nheaders ${JSON.stringify(headers).slice(0, 600)}`,
        });
        return;
      }
    }
    stats.requests += 1;
    stats.statuses[res.status] = (stats.statuses[res.status] ?? 0) + 1;
    const outcome = check(validateMessage, { parsed, label }, res);
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
        return exchange(
          kind,
          typeof body === 'string' ? body : new Uint8Array(body),
          headersFor(plan, undefined),
        );
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
        const { body, headers } = mutate(base, mutations, rng.chance(0.5));
        return exchange(kind, JSON.stringify(body), headers);
      }
      case 'valid': {
        const req = sample('valid', arbs.validRequestArb);
        const msg = { ...req, id: sample('id', arbs.idArb) };
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
