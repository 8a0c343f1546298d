// The request generators and the response oracle of the HTTP fuzzing, shared by test/e2e/fuzz.test.ts (the
// conformance tools of an in-process server) and the fuzz section of the reliability suite (scripts/chaos/fuzz/, a
// `serve` process with the tasks surface).
//
// Generators (fast-check): header sets (correct, omitted, sentinel-wrapped, random or duplicated values), ids,
// _meta shapes, plausible params per method, random and near-valid messages with their mutations, valid requests
// (to truncate or corrupt) and random strings and bytes. What the two surfaces differ in (tools, methods, answers,
// task ids) comes in as a `Surface`.
// The oracle: a reply is 202 with an empty body (notifications only), or 403/405/413/415, or a body whose every
// JSON-RPC message validates against the official schema (schema.ts), with the HTTP status the spec pins for its
// error code, the request id echoed when it was readable, no Mcp-Session-Id, and the stream rules.
import fc from 'fast-check';
import { CORE_METHODS, REMOVED_METHODS, TASK_METHODS } from '../../src/wire/methods.js';
import type { HeaderInit, PostResult } from './http.js';
import {
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_LOG_LEVEL,
  META_PROTOCOL_VERSION,
  META_SUBSCRIPTION_ID,
  nameFor,
  PROTOCOL_VERSION,
  sentinel,
  TASKS_EXTENSION,
} from './protocol.js';
import { validateMessage } from './schema.js';

export { CORE_METHODS, TASK_METHODS };

export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isRequestId = (v: unknown): v is string | number =>
  typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v));

// ---------------------------------------------------------------------------------------------------------------
// The oracle

/** HTTP status the spec pins for an error code (any origin). */
const PINNED_STATUS: Record<number, number> = {
  [-32700]: 400,
  [-32601]: 404,
  [-32020]: 400,
  [-32021]: 400,
  [-32022]: 400,
};

/** Nesting deeper than this may be refused as a whole (JSON-RPC error without id). */
const MAX_READ_DEPTH = 64;

/** What was sent, as far as the oracle needs it. */
export interface Sent {
  /** The parsed body when it was valid JSON (UTF-8), else undefined. */
  parsed?: unknown;
  /** Whether the request named a session (Mcp-Session-Id) without a 2026-07-28 marker: 2025-11-25 rules apply. */
  legacySession?: boolean;
  /** What to print about the request (the start of its text). */
  label: string;
}

/** Why an exchange breaks a property (`fiveXX` when the server answered 5xx), with the exchange itself. */
export interface Verdict {
  why: string;
  fiveXX: boolean;
  detail: string;
}

/** A body as the oracle sees it: decoded exactly as the server does (UTF-8, fatal, BOM stripped), and its label. */
export function sentOf(body: string | Uint8Array, kind?: string, headers: HeaderInit = {}): Sent {
  let parsed: unknown;
  try {
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    parsed = undefined;
  }
  const label =
    typeof body === 'string'
      ? body.slice(0, 300)
      : `${kind === undefined ? '' : `${kind}: `}${body.length} bytes, hex ${Buffer.from(body.subarray(0, 150)).toString('hex')}`;
  return { parsed, label, legacySession: namesLegacySession(parsed, headers) };
}

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

/** Whether a request declared the tasks extension (then a `resultType: "task"` answer is allowed). */
function tasksNegotiated(body: unknown): boolean {
  const caps =
    isObject(body) && isObject(body.params) && isObject(body.params._meta)
      ? body.params._meta[META_CLIENT_CAPABILITIES]
      : undefined;
  return isObject(caps) && isObject(caps.extensions) && isObject(caps.extensions[TASKS_EXTENSION]);
}

/** Thrown by the checks below for a broken property (anything else thrown is a fault of the oracle). */
class Broken extends Error {}

const broken = (why: string): never => {
  throw new Broken(why);
};

/** Returns undefined when the exchange keeps every property, else the first one it breaks. */
export function check(sent: Sent, res: PostResult): Verdict | undefined {
  try {
    checkExchange(sent.parsed, res, sent.legacySession);
    return undefined;
  } catch (err) {
    if (!(err instanceof Broken)) throw err;
    return {
      why: err.message,
      fiveXX: res.status >= 500,
      detail: `request ${sent.label.slice(0, 400)}\n→ ${res.status} ${res.contentType} ${res.text.slice(0, 600)}`,
    };
  }
}

/**
 * A request that names a session and carries no 2026-07-28 marker (version header or `_meta` version) is one of the
 * 2025-11-25 wire's; for a session that does not exist, that wire answers 404.
 */
function namesLegacySession(parsed: unknown, headers: HeaderInit): boolean {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  if (lower['mcp-session-id'] === undefined) return false;
  const version = lower['mcp-protocol-version'];
  if (version !== undefined && String(version).trim() === PROTOCOL_VERSION) return false;
  const params = isObject(parsed) && isObject(parsed.params) ? parsed.params : undefined;
  return !(isObject(params?._meta) && params._meta[META_PROTOCOL_VERSION] !== undefined);
}

/**
 * The tools of test/fixtures/tools/unserializable-tools.mjs return what cannot be written as JSON: their synchronous
 * calls are answered -32603 with HTTP 500, the one 5xx a request may get (the server goes on).
 */
const UNSERIALIZABLE_TOOL = /^bad_(bigint|cycle|getter)$/;

function isUnserializableAnswer(body: unknown, res: PostResult): boolean {
  if (res.status !== 500 || !isObject(body) || body.method !== 'tools/call' || !isObject(body.params))
    return false;
  const name = body.params.name;
  const last = res.messages[res.messages.length - 1];
  return (
    typeof name === 'string' &&
    UNSERIALIZABLE_TOOL.test(name) &&
    isObject(last) &&
    isObject(last.error) &&
    last.error.code === -32603
  );
}

function checkExchange(body: unknown, res: PostResult, legacySession = false): void {
  if (res.status >= 500 && !isUnserializableAnswer(body, res)) broken(`5xx answer (${res.status})`);
  if (res.headers.get('mcp-session-id') !== null) broken('Mcp-Session-Id returned');
  if (res.status === 404 && legacySession) {
    if (!/"Session not found"/.test(res.text)) broken('404 for a legacy session without "Session not found"');
    return;
  }
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
    if (res.text !== '') broken('202 with a body');
    if (!isNotification) broken('202 for something that is not a notification');
    return;
  }
  if ([403, 405, 413, 415].includes(res.status)) {
    for (const msg of res.messages) {
      const errors = validateMessage(msg);
      if (errors.length > 0) broken(`invalid ${res.status} body: ${errors.join('; ')}`);
    }
    return;
  }
  if (isNotification) broken(`notification answered with ${res.status} instead of 202`);
  if (res.jsonError !== undefined) broken(res.jsonError);
  if (res.messages.length === 0) broken('no JSON-RPC message in the body');

  const method = isObject(body) && typeof body.method === 'string' ? body.method : undefined;
  const negotiated = tasksNegotiated(body);
  for (const msg of res.messages) {
    const errors = validateMessage(msg, { method, tasksNegotiated: negotiated });
    if (errors.length > 0) broken(`schema: ${errors.join('; ')}`);
  }

  const last = res.messages[res.messages.length - 1] as Json;
  const isResponse = 'result' in last || 'error' in last;
  if (!res.truncated && !isResponse) broken('the last message is not the response');
  const notes = res.messages.slice(0, isResponse ? -1 : undefined) as Json[];
  for (const msg of notes) {
    if ('result' in msg || 'error' in msg) broken('a response before the end of the stream');
  }
  if (res.truncated && method !== 'subscriptions/listen') broken('a stream that never ended');
  checkNotifications(body, method, notes);
  if (!isResponse) return;

  if ('error' in last) {
    const code = (last.error as Json).code as number;
    const pinned = PINNED_STATUS[code];
    if (pinned !== undefined && res.status !== pinned)
      broken(`error ${code} with HTTP ${res.status}, expected ${pinned}`);
  } else if (res.status !== 200) {
    broken(`a result with HTTP ${res.status}`);
  }

  if (isObject(body) && 'id' in body && isRequestId(body.id)) {
    // A server may refuse absurdly nested documents before reading them (then it cannot know the id).
    const refusedUnread = !('id' in last) && 'error' in last && nestingDepth(body) > MAX_READ_DEPTH;
    if (last.id !== body.id && !refusedUnread) broken(`id not echoed (sent ${JSON.stringify(body.id)})`);
  } else if ('id' in last && !(isObject(body) && isRequestId(body.id))) {
    broken('a response id although the request id was unreadable');
  }
}

/**
 * Stream rules: a listen stream starts with its acknowledgement and tags every notification with its subscription
 * id; a request stream carries only progress (when a progressToken was sent) and log messages (when a logLevel
 * was sent), never tagged with a subscription id.
 */
function checkNotifications(body: unknown, method: string | undefined, notes: Json[]): void {
  if (notes.length === 0) return;
  const params = isObject(body) && isObject(body.params) ? body.params : {};
  const meta = isObject(params._meta) ? params._meta : {};
  const id = isObject(body) ? body.id : undefined;
  notes.forEach((note, index) => {
    const noteMeta = isObject(note.params) && isObject(note.params._meta) ? note.params._meta : {};
    const subscriptionId = noteMeta[META_SUBSCRIPTION_ID];
    if (method === 'subscriptions/listen') {
      if (index === 0 && note.method !== 'notifications/subscriptions/acknowledged')
        broken('listen stream without ack');
      if (subscriptionId !== id) broken(`subscriptionId ${JSON.stringify(subscriptionId)} ≠ listen id`);
      if (note.method === 'notifications/progress' || note.method === 'notifications/message') {
        broken(`${String(note.method)} on a listen stream`);
      }
      return;
    }
    if (subscriptionId !== undefined) broken('subscriptionId on a request-scoped notification');
    if (note.method === 'notifications/progress') {
      const token = isObject(note.params) ? note.params.progressToken : undefined;
      if (meta.progressToken === undefined || token !== meta.progressToken)
        broken('progress without a matching progressToken');
    } else if (note.method === 'notifications/message') {
      if (meta[META_LOG_LEVEL] === undefined) broken('notifications/message without a logLevel');
    } else {
      broken(`unexpected ${String(note.method)} on a request stream`);
    }
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Names

/** The tools of the conformance fixture set (examples/conformance) that calls mostly pick. */
const CONFORMANCE_TOOLS = [
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
/** Removed, client-side, misspelt or otherwise unserved method names. */
export const UNSERVED_METHODS: readonly string[] = [
  ...REMOVED_METHODS,
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
export const PROTOTYPE_NAMES: readonly string[] = [
  'constructor',
  '__proto__',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'isPrototypeOf',
];
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

// ---------------------------------------------------------------------------------------------------------------
// Header plans

export type HeaderChoice =
  | { kind: 'omit' }
  | { kind: 'correct' }
  | { kind: 'sentinel' }
  | { kind: 'random'; value: string }
  | { kind: 'dup'; values: string[]; withCorrect: boolean };

/** How to build each header of a request: the standard ones from its body, plus extras. */
export interface HeaderPlan {
  version: HeaderChoice;
  method: HeaderChoice;
  name: HeaderChoice;
  region: HeaderChoice;
  extra: [string, string][];
  contentType: string | undefined | null;
  origin: string | undefined;
}

/** Every standard header as the body says, nothing else. */
export const CORRECT_PLAN: HeaderPlan = {
  version: { kind: 'correct' },
  method: { kind: 'correct' },
  name: { kind: 'correct' },
  region: { kind: 'correct' },
  extra: [],
  contentType: null,
  origin: undefined,
};

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
export function headersFor(plan: HeaderPlan, body: unknown): HeaderInit {
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
  // fetch refuses values it cannot send; keep the plan within what HTTP allows. A huge value (a 1 MB name) cannot
  // travel in a header either: the mismatch (-32020) is a fine answer then.
  for (const [k, v] of Object.entries(headers)) {
    if (typeof v === 'string' && (!/^[\t\x20-\x7e\xa0-\xff]*$/.test(v) || v.length > 4_000))
      delete headers[k];
  }
  return headers;
}

// ---------------------------------------------------------------------------------------------------------------
// Mutations of near-valid requests

export type Mutation =
  | { k: 'id' | 'jsonrpc' | 'params' | 'meta'; v: unknown }
  | { k: 'method'; v: string }
  | { k: 'param' | 'metaKey'; key: string; v: unknown }
  | { k: 'header'; name: string; v: string | string[] | undefined }
  | { k: 'responseKey'; key: 'result' | 'error' };

const setOrDelete = (obj: Json, key: string, v: unknown): void => {
  if (v === undefined) delete obj[key];
  else Object.defineProperty(obj, key, { value: v, enumerable: true, writable: true, configurable: true });
};

/** Applies mutations: body first (headers then mirror the mutated body), header mutations last. */
export function mutate(
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
  const headers = headersFor(
    { ...CORRECT_PLAN, name: { kind: nameAsSentinel ? 'sentinel' : 'correct' } },
    body,
  );
  for (const m of mutations) if (m.k === 'header') headers[m.name] = m.v;
  return { body, headers };
}

// ---------------------------------------------------------------------------------------------------------------
// Arbitraries that do not depend on the surface

/** Present in about one case out of `1 + absent`; undefined (then dropped) otherwise. */
export const sometimes = <T>(arb: fc.Arbitrary<T>, absent = 3): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: absent, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });

/** Drops undefined values so that absent keys are really absent. */
export const compact = (obj: Record<string, unknown>): Json =>
  Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined));

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

/** Random JSON values as whole bodies. */
export const jsonBodyArb: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 4 });

// ---------------------------------------------------------------------------------------------------------------
// Pathological sizes

/** Nesting far beyond any plausible limit. */
export const PATHOLOGICAL_DEPTH = 10_000;

/** The text of `depth` nested arrays. */
export const deepArray = (depth = PATHOLOGICAL_DEPTH): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;

/** The text of `depth` nested objects `{"a": …}` around `leaf` (JSON text). */
export const deepObject = (depth = PATHOLOGICAL_DEPTH, leaf = '1'): string =>
  `${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`;

/** A 1 MB ASCII string. */
export const hugeAscii = (): string => 'x'.repeat(1_000_000);

/** A ~1 MB string of multi-byte characters (two, three and four UTF-8 bytes). */
export const hugeNonAscii = (): string => 'ü€😀'.repeat(100_000);

/** A tools/list request of about 5 MB, beyond the body limit, and the headers it is sent with. */
export const oversizeBody = (): string =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'y'.repeat(5_000_000) } });
export const OVERSIZE_HEADERS: HeaderInit = {
  'mcp-method': 'tools/list',
  'mcp-protocol-version': PROTOCOL_VERSION,
};

export const idArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.integer() },
  { weight: 4, arbitrary: fc.string({ maxLength: 16 }) },
  { weight: 1, arbitrary: fc.constantFrom(null, 0, -0, 1.5, 2 ** 53, -(2 ** 53), 1e21, true, '', '0', ' ') },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.oneof(fc.object({ maxDepth: 1 }), fc.array(fc.integer(), { maxLength: 2 })) },
);

export const uriArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('test://static-text', 'test://static-binary', 'test://example-resource', 'test://nope', ''),
  fc.string({ maxLength: 12 }).map((s) => `test://template/${encodeURIComponent(s) || 'x'}/data`),
  fc.string({ maxLength: 12 }),
);

export const toolArgsArb: fc.Arbitrary<unknown> = fc.oneof(
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

// ---------------------------------------------------------------------------------------------------------------
// Arbitraries of a surface

/** What a server offers to the fuzzing: the names and shapes the generators favour. */
export interface Surface {
  /** Tool names calls pick most of the time. */
  tools: readonly string[];
  /** Tools that stream notifications or run a while, picked more often still. */
  busyTools: readonly string[];
  /** Plausible arguments per tool (so that calls get past validation and run). */
  argsForTool: Readonly<Record<string, fc.Arbitrary<unknown>>>;
  /** Methods the server serves (picked most often) and names it must refuse. */
  methods: readonly string[];
  otherMethods: readonly string[];
  /** Answers to input requests (`inputResponses`) the tools may ask for. */
  inputResponses: readonly unknown[];
  /** Client capabilities of a valid request. */
  validCaps: Json;
  /** The tasks extension, when the server runs it (its requests then declare the extension more often). */
  tasks?: TasksSurface;
}

export interface TasksSurface {
  /** Real task ids, tried as header values too. */
  taskIds: readonly string[];
  /** The `taskIds` of a subscriptions/listen filter. */
  listenTaskIds: fc.Arbitrary<unknown>;
  /** Params of a tasks/* method (undefined for other methods), given the generator of input answers. */
  params(method: string, inputResponses: fc.Arbitrary<unknown>): fc.Arbitrary<Json> | undefined;
}

/** The conformance fixture set without the tasks extension (what test/e2e/fuzz.test.ts runs against). */
export const CONFORMANCE_SURFACE: Surface = {
  tools: CONFORMANCE_TOOLS,
  busyTools: ['test_tool_with_progress', 'test_logging_tool'],
  argsForTool: {
    test_custom_header: fc.record({ region: fc.string({ maxLength: 12 }) }),
    json_schema_2020_12_tool: fc.oneof(
      fc.record({ name: fc.string({ maxLength: 6 }), email: fc.string({ maxLength: 12 }) }),
      fc.record({ contactMethod: fc.constant('phone'), phone: fc.string({ maxLength: 8 }) }),
    ),
  },
  methods: CORE_METHODS,
  otherMethods: [...UNSERVED_METHODS, ...TASK_METHODS],
  inputResponses: [
    { user_name: { action: 'accept', content: { name: 'Ada' } } },
    { favorite_color: { action: 'accept', content: { color: 'red' } } },
    { confirm: { action: 'decline' } },
    { capital_question: { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'm' } },
    { client_roots: { roots: [{ uri: 'file:///tmp' }] } },
    { x: 1 },
    [],
  ],
  validCaps: { elicitation: {}, sampling: {}, roots: {} },
};

export interface FuzzArbitraries {
  headerPlan: fc.Arbitrary<HeaderPlan>;
  inputResponsesArb: fc.Arbitrary<unknown>;
  /** A JSON-RPC message with randomised parts: usually close to valid, so that it gets deep into the server. */
  messageArb: fc.Arbitrary<unknown>;
  /** A valid request (to be truncated or corrupted). */
  validRequestArb: fc.Arbitrary<Json>;
  /** A valid request for any method name (known, removed, unknown or prototype-named). */
  nearValidBaseArb: fc.Arbitrary<Json>;
  mutationArb: fc.Arbitrary<Mutation>;
  /** Zero to three mutations of a near-valid request. */
  mutationsArb: fc.Arbitrary<Mutation[]>;
  /** Random strings and bytes, invalid UTF-8 inside an otherwise valid request among them. */
  bytesArb: fc.Arbitrary<string | Uint8Array>;
}

/** The generators for a surface. */
export function fuzzArbitraries(surface: Surface): FuzzArbitraries {
  const { tasks } = surface;
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
      ...surface.methods,
      ...surface.otherMethods,
      ...surface.tools,
    ),
    ...(tasks === undefined ? [] : [fc.constantFrom(...tasks.taskIds)]),
  );
  // With the tasks surface, capabilities offer the declared extension once more (so it is declared more often).
  const moreExtensions = tasks === undefined ? [] : [{ [TASKS_EXTENSION]: {} }];
  const capsArb = badCapsArb(moreExtensions);
  const inputResponsesArb = fc.oneof(
    fc.constantFrom(...surface.inputResponses),
    fc.jsonValue({ maxDepth: 3 }),
  );
  const paramsFor = paramsTable(surface, inputResponsesArb);
  const methodArb = fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom(...surface.methods) },
    { weight: 3, arbitrary: fc.constantFrom(...surface.otherMethods) },
    { weight: 1, arbitrary: fc.constantFrom(...PROTOTYPE_NAMES) },
    { weight: 2, arbitrary: fc.string({ maxLength: 20 }) },
  );
  const validRequestArb = validRequestsOf(surface, paramsFor);
  const mutationArb = mutationsOf(methodArb, capsArb, randomHeaderValue);
  return {
    headerPlan: headerPlanArb(randomHeaderValue),
    inputResponsesArb,
    messageArb: messagesOf(methodArb, paramsFor, randomMetaArb(capsArb)),
    validRequestArb,
    nearValidBaseArb: nearValidBaseOf(methodArb, paramsFor, validCapsArb(moreExtensions)),
    mutationArb,
    mutationsArb: fc.array(mutationArb, { maxLength: 3 }),
    bytesArb: bytesOf(validRequestArb),
  };
}

function messagesOf(
  methodArb: fc.Arbitrary<string>,
  paramsFor: (method: string) => fc.Arbitrary<Json>,
  metaArb: fc.Arbitrary<unknown>,
): fc.Arbitrary<unknown> {
  return methodArb.chain((method) =>
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
}

function headerPlanArb(randomHeaderValue: fc.Arbitrary<string>): fc.Arbitrary<HeaderPlan> {
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
  return fc.record({
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
}

/** Client capabilities, often malformed; `moreExtensions` are offered besides the usual extension choices. */
function badCapsArb(moreExtensions: readonly Json[]): fc.Arbitrary<unknown> {
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record(
        {
          elicitation: fc.constantFrom({}, { form: {} }, { url: {} }, { form: {}, url: {} }, { form: 1 }, []),
          sampling: fc.constantFrom({}, { tools: {} }, true),
          roots: fc.constantFrom({}, 'yes'),
          experimental: fc.constantFrom({}, { x: {} }),
          extensions: fc.constantFrom<unknown>(
            {},
            { [TASKS_EXTENSION]: {} },
            { [TASKS_EXTENSION]: 1 },
            ...moreExtensions,
          ),
        },
        { requiredKeys: [] },
      ),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  );
}

/** Valid capabilities (random subset); `moreExtensions` are offered besides the usual extension choices. */
function validCapsArb(moreExtensions: readonly Json[]): fc.Arbitrary<Json> {
  return fc.record(
    {
      elicitation: fc.constantFrom({}, { form: {} }, { url: {} }, { form: {}, url: {} }),
      sampling: fc.constantFrom({}, { tools: {} }),
      roots: fc.constant({}),
      extensions: fc.constantFrom<Json>({}, { [TASKS_EXTENSION]: {} }, ...moreExtensions),
    },
    { requiredKeys: [] },
  );
}

/** A request `_meta`: mostly plausible (some keys dropped, odd values, extra keys), sometimes any JSON or absent. */
function randomMetaArb(capsArb: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.oneof(
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
}

/** Method-specific params (mostly plausible, sometimes wrong). */
function paramsTable(
  surface: Surface,
  inputResponsesArb: fc.Arbitrary<unknown>,
): (method: string) => fc.Arbitrary<Json> {
  return (method) => {
    switch (method) {
      case 'tools/call':
        return toolCallParams(surface, inputResponsesArb);
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
        return completionParams;
      case 'subscriptions/listen':
        return listenParams(
          surface.tasks?.listenTaskIds ?? fc.array(fc.string({ maxLength: 6 }), { maxLength: 2 }),
        );
      default:
        return (
          surface.tasks?.params(method, inputResponsesArb) ??
          fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })
        );
    }
  };
}

function toolCallParams(surface: Surface, inputResponsesArb: fc.Arbitrary<unknown>): fc.Arbitrary<Json> {
  return fc
    .oneof(
      { weight: 6, arbitrary: fc.constantFrom(...surface.tools) },
      { weight: 2, arbitrary: fc.constantFrom(...surface.busyTools) },
      {
        weight: 1,
        arbitrary: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(...PROTOTYPE_NAMES), fc.integer()),
      },
    )
    .chain((name) =>
      fc
        .record({
          arguments: fc.oneof(
            {
              weight: 3,
              arbitrary:
                typeof name === 'string' && Object.hasOwn(surface.argsForTool, name)
                  ? (surface.argsForTool[name] as fc.Arbitrary<unknown>)
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
}

const completionParams: fc.Arbitrary<Json> = fc.record(
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

function listenParams(taskIds: fc.Arbitrary<unknown>): fc.Arbitrary<Json> {
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
            taskIds,
          },
          { requiredKeys: [] },
        ),
        fc.jsonValue({ maxDepth: 1 }),
      ),
    },
    { requiredKeys: [] },
  );
}

function validRequestsOf(
  surface: Surface,
  paramsFor: (method: string) => fc.Arbitrary<Json>,
): fc.Arbitrary<Json> {
  return fc.constantFrom(...surface.methods.filter((m) => m !== 'subscriptions/listen')).chain((method) =>
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
            [META_CLIENT_CAPABILITIES]: surface.validCaps,
            [META_LOG_LEVEL]: logLevel,
            progressToken,
          }),
        },
      })),
  );
}

function nearValidBaseOf(
  methodArb: fc.Arbitrary<string>,
  paramsFor: (method: string) => fc.Arbitrary<Json>,
  capsArb: fc.Arbitrary<Json>,
): fc.Arbitrary<Json> {
  return methodArb.chain((method) =>
    fc
      .record({
        id: fc.oneof(fc.integer(), fc.string({ maxLength: 12 })),
        params: paramsFor(method),
        caps: capsArb,
        logLevel: fc.option(fc.constantFrom(...LOG_LEVELS), { nil: undefined }),
        progressToken: fc.option(
          fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.double({ noNaN: true })),
          { nil: undefined },
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
}

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

function mutationsOf(
  methodArb: fc.Arbitrary<string>,
  capsArb: fc.Arbitrary<unknown>,
  randomHeaderValue: fc.Arbitrary<string>,
): fc.Arbitrary<Mutation> {
  return fc.oneof(
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
          fc.constantFrom(META_SUBSCRIPTION_ID, 'traceparent', '__proto__'),
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
}

function bytesOf(validRequestArb: fc.Arbitrary<Json>): fc.Arbitrary<string | Uint8Array> {
  return fc.oneof(
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
      const quote = text.indexOf('"', at % text.length);
      const cut = quote === -1 ? text.length : quote + 1;
      return new Uint8Array(
        Buffer.concat([Buffer.from(text.slice(0, cut)), Buffer.from(bad), Buffer.from(text.slice(cut))]),
      );
    }),
  );
}

/**
 * How long a fuzz case's event stream may stay open before the case counts as "a stream that never ended": a listen
 * stream stays open by design (its first 150 ms show how it starts); any other must end by itself, given time that
 * is generous on a shared, loaded machine.
 */
export const sseTimeoutFor = (body: string | Uint8Array): number =>
  typeof body === 'string' && body.includes('subscriptions/listen') ? 150 : 5_000;
