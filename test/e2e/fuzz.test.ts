// Bounded property-based fuzzing of the HTTP endpoint over a real loopback port (fast-check).
//
// Properties, for every generated body + header set:
//   - the server never answers 5xx and keeps answering /healthz (it did not crash or wedge);
//   - the response is 202 with an empty body, or 403/405/413/415, or a body whose every JSON-RPC message validates
//     against the official 2026-07-28 schema (test/support/schema.ts), with the HTTP status the spec pins for its
//     error code and the request id echoed when it was readable;
//   - Mcp-Session-Id is never returned;
//   - streams follow the rules: request streams carry only progress (with the request's progressToken) and log
//     messages (only with a logLevel), listen streams start with their acknowledgement and tag every notification
//     with the listen id, and deliver exactly the list_changed notifications their filter asked for.
// Bodies: random JSON values, random strings and bytes (invalid UTF-8), truncated valid requests, random and
// near-valid messages (mutated ids, methods, params, _meta, headers incl. sentinel-looking and duplicated values),
// and an exhaustive table of 10k-deep nesting and ~1 MB strings in every position.
//
// Reproduce a failure with the seed fast-check prints: FUZZ_SEED=<seed> npx vitest run test/e2e/fuzz.test.ts
// FUZZ_RUNS overrides the number of runs per property (default 300).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateMessage } from '../support/schema.js';
import {
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_LOG_LEVEL,
  META_PROTOCOL_VERSION,
  META_SUBSCRIPTION_ID,
  nameFor,
  openSse,
  post,
  PROTOCOL_VERSION,
  sentinel,
  startTestServer,
  type HeaderInit,
  type PostResult,
  type TestServer,
} from '../support/server.js';

type Json = Record<string, unknown>;

const SEED =
  process.env.FUZZ_SEED !== undefined && process.env.FUZZ_SEED !== ''
    ? Number(process.env.FUZZ_SEED)
    : undefined;
const RUNS =
  process.env.FUZZ_RUNS !== undefined && process.env.FUZZ_RUNS !== '' ? Number(process.env.FUZZ_RUNS) : 300;

/** fast-check parameters: fixed seed when FUZZ_SEED is set (fast-check prints the seed of a failing run). */
const runs = (numRuns = RUNS): fc.Parameters<unknown> => ({
  numRuns,
  ...(SEED !== undefined && Number.isFinite(SEED) ? { seed: SEED } : {}),
});

const FUZZ_TIMEOUT_MS = 60_000;

let server: TestServer;
let url: string;

beforeAll(async () => {
  server = await startTestServer({ keepAliveMs: 0 });
  url = server.url;
});

afterAll(async () => {
  await server.close();
});

async function expectHealthy(): Promise<void> {
  const res = await fetch(`${server.base}/healthz`, { signal: AbortSignal.timeout(5_000) });
  expect(res.status).toBe(200);
  expect(await res.text()).toBe('{"status":"ok"}');
}

// ---------------------------------------------------------------------------------------------------------------
// The oracle

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isRequestId = (v: unknown): v is string | number =>
  typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v));

/** HTTP status the spec pins for an error code (any origin). */
const PINNED_STATUS: Record<number, number> = {
  [-32700]: 400,
  [-32601]: 404,
  [-32020]: 400,
  [-32021]: 400,
  [-32022]: 400,
};

/** What we sent, as far as the oracle needs it. */
interface Sent {
  /** The parsed body when it was valid JSON (UTF-8), else undefined. */
  parsed?: unknown;
  /** What to print about the request (the start of its text). */
  label: string;
}

function describeSent(sent: Sent, res: PostResult): string {
  return `request ${sent.label.slice(0, 400)}\n→ ${res.status} ${res.contentType} ${res.text.slice(0, 600)}`;
}

/** Throws (with the exchange) when a response breaks a property. */
function check(sent: Sent, res: PostResult): void {
  const fail = (why: string): never => {
    throw new Error(`${why}\n${describeSent(sent, res)}`);
  };
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
    return;
  }
  if ([403, 405, 413, 415].includes(res.status)) {
    for (const msg of res.messages) {
      const errors = validateMessage(msg);
      if (errors.length > 0) fail(`invalid ${res.status} body: ${errors.join('; ')}`);
    }
    return;
  }
  if (isNotification) fail(`notification answered with ${res.status} instead of 202`);
  if (res.jsonError !== undefined) fail(res.jsonError);
  if (res.messages.length === 0) fail('no JSON-RPC message in the body');

  const method = isObject(body) && typeof body.method === 'string' ? body.method : undefined;
  for (const msg of res.messages) {
    const errors = validateMessage(msg, { method });
    if (errors.length > 0) fail(`schema: ${errors.join('; ')}`);
  }

  const last = res.messages[res.messages.length - 1] as Json;
  const isResponse = 'result' in last || 'error' in last;
  if (!res.truncated && !isResponse) fail('the last message is not the response');
  for (const msg of res.messages.slice(0, isResponse ? -1 : undefined)) {
    if ('result' in (msg as Json) || 'error' in (msg as Json))
      fail('a response before the end of the stream');
  }
  if (res.truncated && method !== 'subscriptions/listen') fail('a stream that never ended');
  checkNotifications(body, method, res.messages.slice(0, isResponse ? -1 : undefined) as Json[], fail);
  if (!isResponse) return;

  if ('error' in last) {
    const code = (last.error as Json).code as number;
    const pinned = PINNED_STATUS[code];
    if (pinned !== undefined && res.status !== pinned)
      fail(`error ${code} with HTTP ${res.status}, expected ${pinned}`);
  } else if (res.status !== 200) {
    fail(`a result with HTTP ${res.status}`);
  }

  if (isObject(body) && 'id' in body && isRequestId(body.id)) {
    // A server may refuse absurdly nested documents before reading them (then it cannot know the id).
    const refusedUnread = !('id' in last) && 'error' in last && nestingDepth(body) > MAX_READ_DEPTH;
    if (last.id !== body.id && !refusedUnread) fail(`id not echoed (sent ${JSON.stringify(body.id)})`);
  } else if ('id' in last && !(isObject(body) && isRequestId(body.id))) {
    fail('a response id although the request id was unreadable');
  }
}

/**
 * Stream rules: a listen stream starts with its acknowledgement and tags every notification with its subscription
 * id; a request stream carries only progress (when a progressToken was sent) and log messages (when a logLevel
 * was sent), never tagged with a subscription id.
 */
function checkNotifications(
  body: unknown,
  method: string | undefined,
  notes: Json[],
  fail: (why: string) => never,
): void {
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

/** Nesting deeper than this may be refused as a whole (JSON-RPC error without id). */
const MAX_READ_DEPTH = 64;

/** Depth of a JSON value, computed without recursion (values may be 10k levels deep). */
function nestingDepth(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    max = Math.max(max, d + 1);
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}

const lastOf = (res: PostResult): Json => res.messages[res.messages.length - 1] as Json;

let sentCount = 0;

/** Sends one fuzz case and checks it; every 50th case also checks /healthz. */
async function exchange(body: string | Uint8Array, headers: HeaderInit, label = 'body'): Promise<PostResult> {
  // Decode exactly as the server does (UTF-8, fatal, BOM stripped) to know what it could read.
  let parsed: unknown;
  try {
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    parsed = undefined;
  }
  const res = await post(url, body, headers, { timeoutMs: 15_000, sseTimeoutMs: 300 });
  const shown =
    typeof body === 'string'
      ? body.slice(0, 300)
      : `${label}: ${body.length} bytes, hex ${Buffer.from(body.subarray(0, 150)).toString('hex')}`;
  check({ parsed, label: shown }, res);
  if (++sentCount % 50 === 0) await expectHealthy();
  return res;
}

// ---------------------------------------------------------------------------------------------------------------
// Arbitraries

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
];
const OTHER_METHODS = [
  'initialize',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
  'tasks/get',
  'tasks/update',
  'tasks/cancel',
  'tasks/result',
  'tasks/list',
  'notifications/cancelled',
  'notifications/initialized',
  'sampling/createMessage',
  'elicitation/create',
  'roots/list',
  'TOOLS/LIST',
  'tools/list ',
];
/** Names that exist on Object.prototype: lookups by name must not find them. */
const PROTOTYPE_NAMES = [
  'constructor',
  '__proto__',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'isPrototypeOf',
];
const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** Header-safe text: visible ASCII, space, tab and some Latin-1 (what fetch lets through). */
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
);

type HeaderChoice =
  | { kind: 'omit' }
  | { kind: 'correct' }
  | { kind: 'sentinel' }
  | { kind: 'random'; value: string }
  | { kind: 'dup'; values: string[]; withCorrect: boolean };

const headerChoice: fc.Arbitrary<HeaderChoice> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ kind: 'omit' as const }) },
  { weight: 6, arbitrary: fc.constant({ kind: 'correct' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'sentinel' as const }) },
  { weight: 2, arbitrary: randomHeaderValue.map((value) => ({ kind: 'random' as const, value })) },
  {
    weight: 1,
    arbitrary: fc
      .record({
        values: fc.array(randomHeaderValue, { minLength: 1, maxLength: 2 }),
        withCorrect: fc.boolean(),
      })
      .map((r) => ({ kind: 'dup' as const, ...r })),
  },
);

interface HeaderPlan {
  version: HeaderChoice;
  method: HeaderChoice;
  name: HeaderChoice;
  region: HeaderChoice;
  extra: [string, string][];
  contentType: string | undefined | null;
  origin: string | undefined;
}

const headerPlan: fc.Arbitrary<HeaderPlan> = fc.record({
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
      arbitrary: fc.constantFrom('http://localhost:3000', 'https://evil.example', 'null', 'http://127.0.0.1'),
    },
  ),
});

function materialise(choice: HeaderChoice, correct: string | undefined): string | string[] | undefined {
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
}

/** Builds the header set for a body from a plan ("correct" values are read from the body when possible). */
function headersFor(plan: HeaderPlan, body: unknown): HeaderInit {
  const obj = isObject(body) ? body : {};
  const method = typeof obj.method === 'string' ? obj.method : undefined;
  const params = isObject(obj.params) ? obj.params : {};
  const metaObj = isObject(params._meta) ? params._meta : {};
  const version =
    typeof metaObj[META_PROTOCOL_VERSION] === 'string'
      ? (metaObj[META_PROTOCOL_VERSION] as string)
      : PROTOCOL_VERSION;
  const args = isObject(params.arguments) ? params.arguments : {};
  const region = typeof args.region === 'string' ? args.region : undefined;
  const headers: HeaderInit = {
    'mcp-protocol-version': materialise(plan.version, version),
    'mcp-method': materialise(plan.method, method),
    'mcp-name': materialise(plan.name, method === undefined ? undefined : nameFor(method, params)),
    'mcp-param-region': materialise(plan.region, region),
  };
  for (const [k, v] of plan.extra) headers[k] = v;
  if (plan.contentType !== null) headers['content-type'] = plan.contentType;
  if (plan.origin !== undefined) headers.origin = plan.origin;
  // fetch refuses values it cannot send; keep the plan within what HTTP allows.
  for (const [k, v] of Object.entries(headers)) {
    if (typeof v === 'string' && !/^[\t\x20-\x7e\xa0-\xff]*$/.test(v)) delete headers[k];
  }
  return headers;
}

const idArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.integer() },
  { weight: 4, arbitrary: fc.string({ maxLength: 16 }) },
  { weight: 1, arbitrary: fc.constantFrom(null, 0, -0, 1.5, 2 ** 53, -(2 ** 53), 1e21, true, '', '0', ' ') },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.oneof(fc.object({ maxDepth: 1 }), fc.array(fc.integer(), { maxLength: 2 })) },
);

const capsArb: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record(
      {
        elicitation: fc.constantFrom({}, { form: {} }, { url: {} }, { form: {}, url: {} }, { form: 1 }, []),
        sampling: fc.constantFrom({}, { tools: {} }, true),
        roots: fc.constantFrom({}, 'yes'),
        experimental: fc.constantFrom({}, { x: {} }),
        extensions: fc.constantFrom(
          {},
          { 'io.modelcontextprotocol/tasks': {} },
          { 'io.modelcontextprotocol/tasks': 1 },
        ),
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);

const metaArb: fc.Arbitrary<unknown> = fc.oneof(
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
            { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.constant(null)) },
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
        const out: Json = { ...m.extra };
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
  fc.constantFrom('test://static-text', 'test://static-binary', 'test://example-resource', 'test://nope', ''),
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

/** Present in about one case out of `1 + absent`; undefined (then dropped) otherwise. */
const sometimes = <T>(arb: fc.Arbitrary<T>, absent = 3): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: absent, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });

/** Drops undefined values so that absent keys are really absent. */
const compact = (obj: Record<string, unknown>): Json =>
  Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined));

/** Plausible arguments per tool (so that calls get past validation and run). */
const argsForTool: Record<string, fc.Arbitrary<unknown>> = {
  test_custom_header: fc.record({ region: fc.string({ maxLength: 12 }) }),
  json_schema_2020_12_tool: fc.oneof(
    fc.record({ name: fc.string({ maxLength: 6 }), email: fc.string({ maxLength: 12 }) }),
    fc.record({ contactMethod: fc.constant('phone'), phone: fc.string({ maxLength: 8 }) }),
  ),
};

/** Method-specific params (mostly plausible, sometimes wrong). */
function paramsFor(method: string): fc.Arbitrary<Json> {
  switch (method) {
    case 'tools/call':
      return fc
        .oneof(
          { weight: 6, arbitrary: fc.constantFrom(...TOOLS) },
          { weight: 2, arbitrary: fc.constantFrom('test_tool_with_progress', 'test_logging_tool') },
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
                      ? (argsForTool[name] as fc.Arbitrary<unknown>)
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
            fc
              .record({
                name: fc.oneof(
                  fc.constantFrom('arg1', 'arg2', 'id', 'resourceUri', ...PROTOTYPE_NAMES),
                  fc.string({ maxLength: 6 }),
                ),
                value: fc.oneof(fc.string({ maxLength: 6 }), fc.integer()),
              })
              .map((a) => a as Json),
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
                taskIds: fc.array(fc.string({ maxLength: 6 }), { maxLength: 2 }),
              },
              { requiredKeys: [] },
            ),
            fc.jsonValue({ maxDepth: 1 }),
          ),
        },
        { requiredKeys: [] },
      );
    default:
      return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
  }
}

const methodArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 10, arbitrary: fc.constantFrom(...METHODS) },
  { weight: 3, arbitrary: fc.constantFrom(...OTHER_METHODS) },
  { weight: 1, arbitrary: fc.constantFrom(...PROTOTYPE_NAMES) },
  { weight: 2, arbitrary: fc.string({ maxLength: 20 }) },
);

/** A JSON-RPC message with randomised parts: usually close to valid, so that it gets deep into the server. */
const messageArb: fc.Arbitrary<unknown> = methodArb.chain((method) =>
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
      const msg: Json = { method };
      if (jsonrpc !== undefined) msg.jsonrpc = jsonrpc;
      if (id !== undefined) msg.id = id;
      if (isObject(params)) {
        msg.params = meta === undefined ? params : { ...params, _meta: meta };
      } else if (params !== undefined) {
        msg.params = params;
      }
      if (extra !== undefined) Object.assign(msg, extra);
      return msg;
    }),
);

/** A valid request (to be truncated or corrupted). */
const validRequestArb: fc.Arbitrary<Json> = fc
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
            [META_CLIENT_CAPABILITIES]: { elicitation: {}, sampling: {}, roots: {} },
            [META_LOG_LEVEL]: logLevel,
            progressToken,
          }),
        },
      })),
  );

const anyHeaders = headerPlan;

/** Valid capabilities (random subset). */
const validCapsArb = fc.record(
  {
    elicitation: fc.constantFrom({}, { form: {} }, { url: {} }, { form: {}, url: {} }),
    sampling: fc.constantFrom({}, { tools: {} }),
    roots: fc.constant({}),
    extensions: fc.constantFrom({}, { 'io.modelcontextprotocol/tasks': {} }),
  },
  { requiredKeys: [] },
);

/** A valid request for any method name (known, removed, unknown or prototype-named) with correct headers. */
const nearValidBaseArb: fc.Arbitrary<Json> = methodArb.chain((method) =>
  fc
    .record({
      id: fc.oneof(fc.integer(), fc.string({ maxLength: 12 })),
      params: paramsFor(method),
      caps: validCapsArb,
      logLevel: fc.option(fc.constantFrom(...LOG_LEVELS), { nil: undefined }),
      progressToken: fc.option(
        fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.double({ noNaN: true })),
        {
          nil: undefined,
        },
      ),
    })
    .map(({ id, params, caps, logLevel, progressToken }) => {
      const metaObj: Json = {
        [META_PROTOCOL_VERSION]: PROTOCOL_VERSION,
        [META_CLIENT_CAPABILITIES]: caps,
        [META_CLIENT_INFO]: { name: 'fuzz', version: '0.0.0' },
      };
      if (logLevel !== undefined) metaObj[META_LOG_LEVEL] = logLevel;
      if (progressToken !== undefined) metaObj.progressToken = progressToken;
      return { jsonrpc: '2.0', id, method, params: { ...params, _meta: metaObj } };
    }),
);

type Mutation =
  | { k: 'id' | 'jsonrpc' | 'params' | 'meta'; v: unknown }
  | { k: 'method'; v: string }
  | { k: 'param' | 'metaKey'; key: string; v: unknown }
  | { k: 'header'; name: string; v: string | string[] | undefined }
  | { k: 'responseKey'; key: 'result' | 'error' };

/** undefined means "delete". */
const valueArb: fc.Arbitrary<unknown> = fc.oneof(
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

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  idArb.map((v) => ({ k: 'id' as const, v })),
  fc.constantFrom(undefined, '1.0', 2, null).map((v) => ({ k: 'jsonrpc' as const, v })),
  methodArb.map((v) => ({ k: 'method' as const, v })),
  fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined)).map((v) => ({ k: 'params' as const, v })),
  fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined)).map((v) => ({ k: 'meta' as const, v })),
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
    .map((r) => ({ k: 'param' as const, ...r })),
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
    .map((r) => ({ k: 'metaKey' as const, ...r })),
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
    .map((r) => ({ k: 'header' as const, ...r })),
  fc.constantFrom('result' as const, 'error' as const).map((key) => ({ k: 'responseKey' as const, key })),
);

const setOrDelete = (obj: Json, key: string, v: unknown): void => {
  if (v === undefined) delete obj[key];
  else Object.defineProperty(obj, key, { value: v, enumerable: true, writable: true, configurable: true });
};

/** Applies mutations: body first (headers then mirror the mutated body), header mutations last. */
function mutate(
  base: Json,
  mutations: Mutation[],
  nameAsSentinel: boolean,
): { body: Json; headers: HeaderInit } {
  const body = JSON.parse(JSON.stringify(base)) as Json;
  for (const m of mutations) {
    switch (m.k) {
      case 'id':
      case 'jsonrpc':
        setOrDelete(body, m.k, m.v);
        break;
      case 'method':
        body.method = m.v;
        break;
      case 'params':
        setOrDelete(body, 'params', m.v);
        break;
      case 'meta':
        if (isObject(body.params)) setOrDelete(body.params, '_meta', m.v);
        break;
      case 'param':
        if (isObject(body.params)) setOrDelete(body.params, m.key, m.v);
        break;
      case 'metaKey':
        if (isObject(body.params) && isObject(body.params._meta)) setOrDelete(body.params._meta, m.key, m.v);
        break;
      case 'responseKey':
        body[m.key] = m.key === 'result' ? { resultType: 'complete' } : { code: -32603, message: 'x' };
        break;
      case 'header':
        break;
    }
  }
  const plan: HeaderPlan = {
    version: { kind: 'correct' },
    method: { kind: 'correct' },
    name: { kind: nameAsSentinel ? 'sentinel' : 'correct' },
    region: { kind: 'correct' },
    extra: [],
    contentType: null,
    origin: undefined,
  };
  const headers = headersFor(plan, body);
  for (const m of mutations) if (m.k === 'header') headers[m.name] = m.v;
  return { body, headers };
}

// ---------------------------------------------------------------------------------------------------------------

describe('fuzz: the HTTP endpoint', () => {
  it(
    'random JSON values as bodies',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), anyHeaders, async (value, plan) => {
          await exchange(JSON.stringify(value) ?? 'null', headersFor(plan, value));
        }),
        runs(),
      );
      await expectHealthy();
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    'random strings and random bytes (incl. invalid UTF-8) as bodies',
    async () => {
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
      const bodyArb = fc.oneof(
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
          // Invalid bytes inside a string value of an otherwise valid request.
          const text = JSON.stringify(req);
          const quote = text.indexOf('"', (at % text.length) + 0);
          const cut = quote === -1 ? text.length : quote + 1;
          return Buffer.concat([
            Buffer.from(text.slice(0, cut)),
            Buffer.from(bad),
            Buffer.from(text.slice(cut)),
          ]);
        }),
      );
      await fc.assert(
        fc.asyncProperty(bodyArb, anyHeaders, async (body, plan) => {
          await exchange(
            typeof body === 'string' ? body : new Uint8Array(body),
            headersFor(plan, undefined),
            'bytes',
          );
        }),
        runs(),
      );
      await expectHealthy();
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    'truncated valid requests',
    async () => {
      await fc.assert(
        fc.asyncProperty(validRequestArb, fc.nat(), anyHeaders, async (req, at, plan) => {
          const text = JSON.stringify(req);
          await exchange(text.slice(0, at % text.length), headersFor(plan, req));
        }),
        runs(),
      );
      await expectHealthy();
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    'random methods, ids, params, _meta shapes and header sets',
    async () => {
      await fc.assert(
        fc.asyncProperty(messageArb, anyHeaders, async (msg, plan) => {
          await exchange(JSON.stringify(msg), headersFor(plan, msg));
        }),
        runs(),
      );
      await expectHealthy();
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    'near-valid requests: a valid request for any method with zero to three mutations (body or headers)',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          nearValidBaseArb,
          fc.array(mutationArb, { maxLength: 3 }),
          fc.boolean(),
          async (base, mutations, nameAsSentinel) => {
            const { body, headers } = mutate(base, mutations, nameAsSentinel);
            await exchange(JSON.stringify(body), headers);
          },
        ),
        runs(),
      );
      await expectHealthy();
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    'valid requests with correct headers, random ids and random _meta extras',
    async () => {
      const plan: HeaderPlan = {
        version: { kind: 'correct' },
        method: { kind: 'correct' },
        name: { kind: 'correct' },
        region: { kind: 'correct' },
        extra: [],
        contentType: null,
        origin: undefined,
      };
      await fc.assert(
        fc.asyncProperty(validRequestArb, idArb, async (req, id) => {
          const msg = { ...req, id };
          await exchange(JSON.stringify(msg), headersFor(plan, msg));
        }),
        runs(),
      );
      await expectHealthy();
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    'request-scoped streams: progress and log notifications exactly as the request _meta asks',
    async () => {
      const LEVEL_RANK = new Map(LOG_LEVELS.map((l, i) => [l, i]));
      const arb = fc.record({
        tool: fc.constantFrom('test_tool_with_progress', 'test_logging_tool', 'test_simple_text'),
        id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 })),
        logLevel: sometimes(
          fc.oneof(fc.constantFrom(...LOG_LEVELS), fc.string({ maxLength: 6 }), fc.integer()),
          1,
        ),
        progressToken: sometimes(
          fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.double(), fc.boolean()),
          1,
        ),
      });
      await fc.assert(
        fc.asyncProperty(arb, async ({ tool, id, logLevel, progressToken }) => {
          const body = {
            jsonrpc: '2.0',
            id,
            method: 'tools/call',
            params: {
              name: tool,
              _meta: compact({
                [META_PROTOCOL_VERSION]: PROTOCOL_VERSION,
                [META_CLIENT_CAPABILITIES]: {},
                [META_LOG_LEVEL]: logLevel,
                progressToken,
              }),
            },
          };
          const res = await exchange(JSON.stringify(body), {
            'mcp-protocol-version': PROTOCOL_VERSION,
            'mcp-method': 'tools/call',
            'mcp-name': tool,
          });
          const validLevel =
            logLevel === undefined || (typeof logLevel === 'string' && LEVEL_RANK.has(logLevel));
          const validToken =
            progressToken === undefined ||
            typeof progressToken === 'string' ||
            (typeof progressToken === 'number' && Number.isSafeInteger(progressToken));
          if (!validLevel || !validToken) {
            expect(res.status).toBe(400);
            expect((lastOf(res).error as Json).code).toBe(-32602);
            return;
          }
          expect(res.status).toBe(200);
          const notes = res.messages.slice(0, -1) as Json[];
          const expected =
            tool === 'test_tool_with_progress' && progressToken !== undefined
              ? 3
              : tool === 'test_logging_tool' &&
                  logLevel !== undefined &&
                  (LEVEL_RANK.get(logLevel as string) ?? 9) <= 1
                ? 3
                : 0;
          expect(notes).toHaveLength(expected);
          expect(res.contentType.startsWith(expected > 0 ? 'text/event-stream' : 'application/json')).toBe(
            true,
          );
          expect(lastOf(res).id).toBe(id);
        }),
        runs(Math.min(RUNS, 100)),
      );
      await expectHealthy();
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    'subscriptions/listen: random filters and triggers deliver exactly the requested list_changed notifications',
    async () => {
      const arb = fc.record({
        id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 })),
        filter: fc.record(
          {
            toolsListChanged: fc.boolean(),
            promptsListChanged: fc.boolean(),
            resourcesListChanged: fc.boolean(),
            resourceSubscriptions: fc.array(uriArb, { maxLength: 2 }),
          },
          { requiredKeys: [] },
        ),
        triggers: fc.array(fc.constantFrom('test_trigger_tool_change', 'test_trigger_prompt_change'), {
          maxLength: 3,
        }),
      });
      await fc.assert(
        fc.asyncProperty(arb, async ({ id, filter, triggers }) => {
          const body = {
            jsonrpc: '2.0',
            id,
            method: 'subscriptions/listen',
            params: {
              notifications: filter,
              _meta: { [META_PROTOCOL_VERSION]: PROTOCOL_VERSION, [META_CLIENT_CAPABILITIES]: {} },
            },
          };
          const stream = await openSse(url, body, {
            'mcp-protocol-version': PROTOCOL_VERSION,
            'mcp-method': 'subscriptions/listen',
          });
          try {
            expect(stream.status).toBe(200);
            const ack = (await stream.next(2_000)) as Json;
            expect(validateMessage(ack, 'subscriptions/listen')).toEqual([]);
            expect(ack.method).toBe('notifications/subscriptions/acknowledged');
            const ackParams = ack.params as Json;
            expect((ackParams._meta as Json)[META_SUBSCRIPTION_ID]).toBe(id);
            const agreed = ackParams.notifications as Json;
            // The server agrees to at most what was asked for (true flags, non-empty resource lists).
            for (const [key, value] of Object.entries(agreed)) {
              if (key === 'resourceSubscriptions') {
                expect(
                  (value as string[]).every((u) => (filter.resourceSubscriptions ?? []).includes(u)),
                ).toBe(true);
              } else {
                expect(value).toBe(true);
                expect((filter as Json)[key]).toBe(true);
              }
            }
            for (const tool of triggers) {
              const res = await exchange(
                JSON.stringify({
                  jsonrpc: '2.0',
                  id: `t-${tool}`,
                  method: 'tools/call',
                  params: {
                    name: tool,
                    _meta: { [META_PROTOCOL_VERSION]: PROTOCOL_VERSION, [META_CLIENT_CAPABILITIES]: {} },
                  },
                }),
                { 'mcp-protocol-version': PROTOCOL_VERSION, 'mcp-method': 'tools/call', 'mcp-name': tool },
              );
              expect(res.status).toBe(200);
            }
            const received = (await stream.drain(120)) as Json[];
            for (const msg of received) {
              expect(validateMessage(msg, 'subscriptions/listen')).toEqual([]);
              expect(((msg.params as Json)._meta as Json)[META_SUBSCRIPTION_ID]).toBe(id);
            }
            const count = (m: string): number => received.filter((r) => r.method === m).length;
            const toolTriggers = triggers.filter((t) => t === 'test_trigger_tool_change').length;
            const promptTriggers = triggers.length - toolTriggers;
            expect(count('notifications/tools/list_changed')).toBe(
              agreed.toolsListChanged === true ? toolTriggers : 0,
            );
            expect(count('notifications/prompts/list_changed')).toBe(
              agreed.promptsListChanged === true ? promptTriggers : 0,
            );
            expect(received.length).toBe(
              count('notifications/tools/list_changed') + count('notifications/prompts/list_changed'),
            );
          } finally {
            stream.close();
          }
        }),
        runs(Math.min(RUNS, 25)),
      );
      await expectHealthy();
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    'pathological sizes: 10k-deep nesting and ~1 MB strings in every position of every kind of request',
    async () => {
      const DEPTH = 10_000;
      const deepArray = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;
      const deepObject = `${'{"a":'.repeat(DEPTH)}1${'}'.repeat(DEPTH)}`;
      const payloads: [string, string][] = [
        ['deep array', deepArray],
        ['deep object', deepObject],
        // Just under a plausible nesting limit (64), so that the value reaches the method handlers.
        ['deep array (50)', `${'['.repeat(50)}${']'.repeat(50)}`],
        ['deep object (50)', `${'{"a":'.repeat(50)}"x"${'}'.repeat(50)}`],
        ['1 MB ASCII string', JSON.stringify('x'.repeat(1_000_000))],
        ['~1 MB non-ASCII string', JSON.stringify('ü€😀'.repeat(100_000))],
      ];
      const meta = {
        [META_PROTOCOL_VERSION]: PROTOCOL_VERSION,
        [META_CLIENT_CAPABILITIES]: { elicitation: {}, sampling: {} },
      };
      const targets: [string, Json][] = [
        ['tools/call', { name: 'test_simple_text', arguments: {} }],
        ['tools/call', { name: 'test_input_required_result_elicitation' }],
        ['tools/call', { name: 'json_schema_2020_12_tool', arguments: { email: 'e' } }],
        ['prompts/get', { name: 'test_prompt_with_arguments', arguments: { arg1: 'a', arg2: 'b' } }],
        ['resources/read', { uri: 'test://template/1/data' }],
        [
          'completion/complete',
          {
            ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
            argument: { name: 'arg1', value: 't' },
          },
        ],
        ['subscriptions/listen', { notifications: { toolsListChanged: true } }],
        ['tools/list', {}],
      ];
      const positions: string[][] = [
        ['id'],
        ['method'],
        ['params', 'name'],
        ['params', 'uri'],
        ['params', 'arguments'],
        ['params', 'arguments', 'x'],
        ['params', 'arguments', 'arg1'],
        ['params', 'arguments', 'address'],
        ['params', 'inputResponses'],
        ['params', 'inputResponses', 'user_name'],
        ['params', 'inputResponses', 'user_name', 'content'],
        ['params', 'requestState'],
        ['params', 'cursor'],
        ['params', 'ref'],
        ['params', 'argument', 'value'],
        ['params', 'context'],
        ['params', 'notifications'],
        ['params', 'notifications', 'resourceSubscriptions'],
        ['params', '_meta', META_PROTOCOL_VERSION],
        ['params', '_meta', META_CLIENT_CAPABILITIES, 'experimental'],
        ['params', '_meta', META_CLIENT_CAPABILITIES, 'elicitation'],
        ['params', '_meta', META_CLIENT_INFO],
        ['params', '_meta', META_LOG_LEVEL],
        ['params', '_meta', 'progressToken'],
        ['params', '_meta', 'extra'],
        ['params', 'extra'],
      ];
      /** JSON text of a request with `path` replaced by a raw JSON payload. */
      const placed = (method: string, params: Json, path: string[], payload: string): string => {
        const request: Json = {
          jsonrpc: '2.0',
          id: 1,
          method,
          params: JSON.parse(JSON.stringify({ ...params, _meta: meta })),
        };
        let cur: Json = request;
        for (const key of path.slice(0, -1)) {
          if (!isObject(cur[key])) cur[key] = {};
          cur = cur[key] as Json;
        }
        cur[path[path.length - 1] as string] = '__PAYLOAD__';
        return JSON.stringify(request).replace('"__PAYLOAD__"', payload);
      };
      const failures: string[] = [];
      const probe = async (label: string, text: string, parsed: unknown): Promise<void> => {
        const headers = headersFor(
          {
            version: { kind: 'correct' },
            method: { kind: 'correct' },
            name: { kind: 'correct' },
            region: { kind: 'omit' },
            extra: [],
            contentType: null,
            origin: undefined,
          },
          parsed,
        );
        // A 1 MB name cannot travel in a header; the mismatch (-32020) is a fine answer then.
        for (const [k, v] of Object.entries(headers))
          if (typeof v === 'string' && v.length > 4_000) delete headers[k];
        try {
          const res = await post(url, text, headers, { timeoutMs: 15_000, sseTimeoutMs: 150 });
          check({ parsed, label }, res);
        } catch (err) {
          failures.push(`${label}: ${String(err).split('\n').slice(0, 3).join(' | ').slice(0, 400)}`);
        }
      };
      for (const [name, payload] of payloads) {
        await probe(`whole body: ${name}`, payload, JSON.parse(payload));
        await probe(`whole body: unterminated ${name}`, payload.slice(0, -1), undefined);
      }
      // Deep payloads go to every target; the (slower) 1 MB strings only to tools/call and resources/read.
      const hugeTargets = new Set([0, 4]);
      for (const [index, [method, params]] of targets.entries()) {
        for (const path of positions) {
          for (const [name, payload] of payloads) {
            if (!name.startsWith('deep') && !hugeTargets.has(index)) continue;
            const text = placed(method, params, path, payload);
            await probe(
              `${method} ${JSON.stringify(params).slice(0, 60)} at ${path.join('.')}: ${name}`,
              text,
              JSON.parse(text),
            );
          }
        }
      }
      await expectHealthy();
      expect(failures, `${failures.length} failing cases:\n${failures.join('\n')}`).toEqual([]);
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    'an oversized body (> maxBodyBytes) is refused with 413 (or the connection is cut) and the server stays up',
    async () => {
      const body = JSON.stringify({
        ...{ jsonrpc: '2.0', id: 1, method: 'tools/list' },
        params: { pad: 'y'.repeat(5_000_000) },
      });
      for (let i = 0; i < 3; i++) {
        try {
          const res = await post(url, body, {
            'mcp-method': 'tools/list',
            'mcp-protocol-version': PROTOCOL_VERSION,
          });
          expect(res.status).toBe(413);
          for (const msg of res.messages) expect(validateMessage(msg)).toEqual([]);
        } catch (err) {
          // A reset while uploading is an acceptable way to refuse; anything else is not.
          expect(String((err as { cause?: unknown }).cause ?? err)).toMatch(
            /ECONNRESET|EPIPE|other side closed|socket/i,
          );
        }
      }
      await expectHealthy();
    },
    FUZZ_TIMEOUT_MS,
  );
});
