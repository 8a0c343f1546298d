// Golden wire tests: exact HTTP status, JSON-RPC code, echoed id and data shape for every error class, plus the
// shapes of results, SSE streams, subscriptions and MRTR rounds, over a real loopback port. Every message the server
// sends is validated against the official 2026-07-28 JSON schema (test/support/schema.ts).
//
// Fixture files (test/fixtures/wire/*.json) hold request/response pairs:
//   { "description", "request": { "headers", "body" (object, or a string sent verbatim) },
//     "response": { "status", "body" } }
// In an expected body the string "<string>" matches any string (used for the non-deterministic requestState).
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateMessage } from '../support/schema.js';
import {
  buildRequest,
  lastMessage,
  META_CLIENT_CAPABILITIES,
  META_LOG_LEVEL,
  META_PROTOCOL_VERSION,
  META_SERVER_INFO,
  META_SUBSCRIPTION_ID,
  openSse,
  post,
  PROTOCOL_VERSION,
  rawRequest,
  rpc,
  sentinel,
  standardHeaders,
  startTestServer,
  TEST_SERVER_INFO,
  type PostResult,
  type TestServer,
} from '../support/server.js';

type Json = Record<string, unknown>;
type Id = string | number;

let server: TestServer;
let url: string;

beforeAll(async () => {
  server = await startTestServer();
  url = server.url;
});

afterAll(async () => {
  await server.close();
});

const asJson = (value: unknown): Json => {
  expect(typeof value === 'object' && value !== null && !Array.isArray(value)).toBe(true);
  return value as Json;
};

/** Checks what every response must satisfy: schema-valid messages and no session id. */
function checkCommon(res: PostResult, method?: string): void {
  expect(res.headers.get('mcp-session-id')).toBeNull();
  expect(res.jsonError).toBeUndefined();
  for (const msg of res.messages) expect(validateMessage(msg, { method })).toEqual([]);
}

/** Asserts a single JSON error response; `id` undefined means the response must carry no id. */
function expectError(
  res: PostResult,
  status: number,
  code: number,
  id: Id | undefined,
  method?: string,
): Json {
  checkCommon(res, method);
  expect(res.status, res.text.slice(0, 300)).toBe(status);
  expect(res.contentType).toMatch(/^application\/json/);
  expect(res.messages).toHaveLength(1);
  const msg = asJson(res.messages[0]);
  expect(msg.jsonrpc).toBe('2.0');
  expect(msg).not.toHaveProperty('result');
  const error = asJson(msg.error);
  expect(error.code).toBe(code);
  expect(typeof error.message).toBe('string');
  if (id === undefined) {
    expect(msg).not.toHaveProperty('id');
  } else {
    expect(msg.id).toStrictEqual(id);
    expect(typeof msg.id).toBe(typeof id);
  }
  return error;
}

/** Asserts a successful response (JSON or SSE) and returns its result. */
function expectResult(res: PostResult, id: Id, method: string): Json {
  checkCommon(res, method);
  expect(res.status, res.text.slice(0, 300)).toBe(200);
  const msg = lastMessage(res);
  expect(msg).not.toHaveProperty('error');
  expect(msg.id).toStrictEqual(id);
  const result = asJson(msg.result);
  expect(typeof result.resultType).toBe('string');
  expect(asJson(result._meta)[META_SERVER_INFO]).toEqual(TEST_SERVER_INFO);
  return result;
}

/**
 * For absurdly nested requests: either refused as a whole before the id is read (400, -32600, no id) or answered
 * normally (echoed id; an error then is -32602). Never an internal error.
 */
function expectDeepRefusedOrServed(res: PostResult, id: Id, method: string): void {
  checkCommon(res, method);
  expect(res.status, res.text.slice(0, 200)).toBeLessThan(500);
  const msg = lastMessage(res);
  if (!('id' in msg)) {
    expectError(res, 400, -32600, undefined, method);
    return;
  }
  expect(msg.id).toBe(id);
  if ('error' in msg) expect(asJson(msg.error).code).toBe(-32602);
}

/** A request body plus headers with one part broken by `mutate`. */
function mutated(
  method: string,
  params: Json,
  mutate: (body: Json, headers: Record<string, string | undefined>) => void,
  id: Id = 'm-1',
): { body: Json; headers: Record<string, string | undefined> } {
  const built = buildRequest(method, params, { id });
  const headers = built.headers as Record<string, string | undefined>;
  mutate(built.body, headers);
  return { body: built.body, headers };
}

const paramsOf = (body: Json): Json => body.params as Json;
const metaOf = (body: Json): Json => paramsOf(body)._meta as Json;

// ---------------------------------------------------------------------------------------------------------------

describe('JSON-RPC framing', () => {
  it('parse error → 400, -32700, no id', async () => {
    const res = await post(
      url,
      '{"jsonrpc":"2.0","id":1,"method":"tools/list",',
      standardHeaders('tools/list'),
    );
    const error = expectError(res, 400, -32700, undefined);
    expect(error).not.toHaveProperty('data');
  });

  it.each([
    ['missing method', '{"jsonrpc":"2.0","id":"inv-1"}', 'inv-1'],
    ['empty method', '{"jsonrpc":"2.0","id":11,"method":""}', 11],
    ['jsonrpc 1.0', '{"jsonrpc":"1.0","id":7,"method":"tools/list","params":{}}', 7],
    ['missing jsonrpc', '{"id":"no-version","method":"tools/list","params":{}}', 'no-version'],
    ['params is an array', '{"jsonrpc":"2.0","id":8,"method":"tools/list","params":[]}', 8],
    ['params is null', '{"jsonrpc":"2.0","id":"p-null","method":"tools/list","params":null}', 'p-null'],
    ['id is null', '{"jsonrpc":"2.0","id":null,"method":"tools/list","params":{}}', undefined],
    ['id is a float', '{"jsonrpc":"2.0","id":1.5,"method":"tools/list","params":{}}', undefined],
    ['id is an object', '{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list","params":{}}', undefined],
    ['id is a boolean', '{"jsonrpc":"2.0","id":true,"method":"tools/list","params":{}}', undefined],
    ['body is a number', '42', undefined],
    ['body is a string', '"tools/list"', undefined],
    ['body is null', 'null', undefined],
  ])('invalid request (%s) → 400, -32600', async (_label, body, id) => {
    const res = await post(url, body, standardHeaders('tools/list'));
    expectError(res, 400, -32600, id);
  });

  it('batch array → 400, -32600, no id', async () => {
    const { body, headers } = buildRequest('tools/list', {}, { id: 1 });
    const res = await post(url, [body, body], headers);
    expectError(res, 400, -32600, undefined);
  });

  it('empty batch array → 400, -32600', async () => {
    expectError(await post(url, '[]', standardHeaders('tools/list')), 400, -32600, undefined);
  });

  it.each([
    ['a result', { jsonrpc: '2.0', id: 3, result: { resultType: 'complete' } }, 3],
    ['an error', { jsonrpc: '2.0', id: 'r-4', error: { code: -32601, message: 'nope' } }, 'r-4'],
  ])('response object sent by the client (%s) → 400, -32600, id echoed', async (_label, body, id) => {
    expectError(await post(url, body, standardHeaders('tools/list')), 400, -32600, id);
  });

  it('echoes the id with its JSON type (number stays number, numeric string stays string)', async () => {
    for (const id of [42, '42', 0, -7, 'ünïcode-id', '']) {
      const res = await rpc(url, 'tools/call', { name: 'no_such_tool' }, { id });
      expectError(res, 200, -32602, id, 'tools/call');
    }
  });
});

describe('_meta envelope', () => {
  it('missing params → 400, -32602', async () => {
    const { body, headers } = mutated('tools/list', {}, (b) => delete b.params, 'no-params');
    expectError(await post(url, body, headers), 400, -32602, 'no-params');
  });

  it('missing _meta → 400, -32602', async () => {
    const { body, headers } = mutated('tools/list', {}, (b) => delete paramsOf(b)._meta, 501);
    expectError(await post(url, body, headers), 400, -32602, 501);
  });

  it('missing protocolVersion → 400, -32602', async () => {
    const { body, headers } = mutated('tools/list', {}, (b) => delete metaOf(b)[META_PROTOCOL_VERSION]);
    expectError(await post(url, body, headers), 400, -32602, 'm-1');
  });

  it('missing clientCapabilities → 400, -32602', async () => {
    const { body, headers } = mutated('tools/list', {}, (b) => delete metaOf(b)[META_CLIENT_CAPABILITIES]);
    expectError(await post(url, body, headers), 400, -32602, 'm-1');
  });

  it('clientCapabilities that is not an object → 400, -32602', async () => {
    const { body, headers } = mutated('tools/list', {}, (b) => (metaOf(b)[META_CLIENT_CAPABILITIES] = []));
    expectError(await post(url, body, headers), 400, -32602, 'm-1');
  });

  it('missing _meta on tools/call (with a correct Mcp-Name) → 400, -32602', async () => {
    const { body, headers } = mutated(
      'tools/call',
      { name: 'test_simple_text' },
      (b) => delete paramsOf(b)._meta,
    );
    expectError(await post(url, body, headers), 400, -32602, 'm-1', 'tools/call');
  });

  it('invalid logLevel → 400, -32602', async () => {
    const res = await rpc(url, 'tools/list', {}, { id: 'lvl', meta: { [META_LOG_LEVEL]: 'verbose' } });
    expectError(res, 400, -32602, 'lvl', 'tools/list');
  });

  it('a request without clientInfo is served', async () => {
    const { body, headers } = mutated(
      'tools/list',
      {},
      (b) => delete metaOf(b)['io.modelcontextprotocol/clientInfo'],
    );
    expectResult(await post(url, body, headers), 'm-1', 'tools/list');
  });

  it.each(['2025-11-25', '2025-06-18', 'DRAFT-2026-V1', '1900-01-01'])(
    'unsupported version %s with a matching header → 400, -32022, data {supported, requested}',
    async (version) => {
      const { body, headers } = mutated('tools/list', {}, (b, h) => {
        metaOf(b)[META_PROTOCOL_VERSION] = version;
        h['mcp-protocol-version'] = version;
      });
      const error = expectError(await post(url, body, headers), 400, -32022, 'm-1', 'tools/list');
      expect(error.data).toEqual({ supported: [PROTOCOL_VERSION], requested: version });
    },
  );
});

describe('standard request headers', () => {
  it('MCP-Protocol-Version ≠ _meta protocolVersion → 400, -32020', async () => {
    const res = await rpc(
      url,
      'tools/list',
      {},
      { id: 'pv', headers: { 'mcp-protocol-version': '2025-11-25' } },
    );
    expectError(res, 400, -32020, 'pv', 'tools/list');
  });

  it('missing MCP-Protocol-Version → 400, -32020', async () => {
    const res = await rpc(
      url,
      'tools/list',
      {},
      { id: 'pv-missing', headers: { 'mcp-protocol-version': undefined } },
    );
    expectError(res, 400, -32020, 'pv-missing', 'tools/list');
  });

  it.each([
    ['missing', undefined],
    ['mismatched', 'tools/call'],
    ['upper-case', 'TOOLS/LIST'],
    ['another method with a common prefix', 'tools/listx'],
    ['duplicated', ['tools/list', 'tools/list']],
  ] as const)('%s Mcp-Method → 400, -32020', async (_label, value) => {
    const res = await rpc(url, 'tools/list', {}, { id: 77, headers: { 'mcp-method': value } });
    expectError(res, 400, -32020, 77, 'tools/list');
  });

  it('header names are case-insensitive', async () => {
    const { body } = buildRequest('tools/list', {}, { id: 'case' });
    const res = await rawRequest(url, {
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-PROTOCOL-VERSION': PROTOCOL_VERSION,
        'MCP-METHOD': 'tools/list',
      },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const msg = asJson(res.messages[0]);
    expect(validateMessage(msg, 'tools/list')).toEqual([]);
    expect(msg.id).toBe('case');
  });

  const named: [string, Json, string][] = [
    ['tools/call', { name: 'test_simple_text' }, 'test_simple_text'],
    ['prompts/get', { name: 'test_simple_prompt' }, 'test_simple_prompt'],
    ['resources/read', { uri: 'test://static-text' }, 'test://static-text'],
  ];

  describe.each(named)('Mcp-Name on %s', (method, params, value) => {
    it('missing → 400, -32020', async () => {
      const res = await rpc(url, method, params, { id: 'n-1', headers: { 'mcp-name': undefined } });
      expectError(res, 400, -32020, 'n-1', method);
    });

    it('mismatched → 400, -32020', async () => {
      const res = await rpc(url, method, params, { id: 'n-2', headers: { 'mcp-name': `${value}-other` } });
      expectError(res, 400, -32020, 'n-2', method);
    });

    it('base64 sentinel with the correct value → accepted', async () => {
      const res = await rpc(url, method, params, { id: 'n-3', headers: { 'mcp-name': sentinel(value) } });
      const result = expectResult(res, 'n-3', method);
      expect(result.resultType).toBe('complete');
    });

    it('sentinel with invalid base64 → 400, -32020', async () => {
      const res = await rpc(url, method, params, {
        id: 'n-4',
        headers: { 'mcp-name': '=?base64?*not base64*?=' },
      });
      expectError(res, 400, -32020, 'n-4', method);
    });

    it('sentinel with a correct value but truncated padding → 400, -32020', async () => {
      const encoded = Buffer.from(value, 'utf8').toString('base64').replace(/=+$/, '');
      const broken = `=?base64?${encoded.slice(0, -1)}?=`;
      const res = await rpc(url, method, params, { id: 'n-5', headers: { 'mcp-name': broken } });
      expectError(res, 400, -32020, 'n-5', method);
    });

    it('sentinel markers in another case are a literal value → 400, -32020', async () => {
      const upper = `=?BASE64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
      const res = await rpc(url, method, params, { id: 'n-6', headers: { 'mcp-name': upper } });
      expectError(res, 400, -32020, 'n-6', method);
    });
  });

  it('non-ASCII Mcp-Name: accepted in a sentinel, rejected raw', async () => {
    const uri = 'test://template/grüße/data';
    const ok = await rpc(url, 'resources/read', { uri }, { id: 'utf-1' });
    const result = expectResult(ok, 'utf-1', 'resources/read');
    expect(result.contents).toBeInstanceOf(Array);
    const raw = await rpc(url, 'resources/read', { uri }, { id: 'utf-2', headers: { 'mcp-name': uri } });
    expectError(raw, 400, -32020, 'utf-2', 'resources/read');
  });

  it('a plain value and a whitespace-padded sentinel are both accepted', async () => {
    const res = await rpc(url, 'tools/call', { name: 'test_simple_text' }, { id: 's-1' });
    expectResult(res, 's-1', 'tools/call');
    const padded = await rpc(
      url,
      'tools/call',
      { name: 'test_simple_text' },
      { id: 's-2', headers: { 'mcp-name': `  ${sentinel('test_simple_text')}  ` } },
    );
    expectResult(padded, 's-2', 'tools/call');
  });

  it('Mcp-Param-Region mirrors an x-mcp-header argument', async () => {
    const params = { name: 'test_custom_header', arguments: { region: 'eu-west' } };
    expectResult(
      await rpc(url, 'tools/call', params, { id: 'r-1', headers: { 'mcp-param-region': 'eu-west' } }),
      'r-1',
      'tools/call',
    );
    expectError(await rpc(url, 'tools/call', params, { id: 'r-2' }), 400, -32020, 'r-2', 'tools/call');
    expectError(
      await rpc(url, 'tools/call', params, { id: 'r-3', headers: { 'mcp-param-region': 'us-east' } }),
      400,
      -32020,
      'r-3',
      'tools/call',
    );
  });
});

describe('methods', () => {
  it.each([
    'initialize',
    'ping',
    'logging/setLevel',
    'resources/subscribe',
    'resources/unsubscribe',
    'tasks/result',
    'tasks/list',
    'notifications/initialized',
    'sampling/createMessage',
    'no/such/method',
  ])('%s → 404, -32601', async (method) => {
    const res = await rpc(url, method, {}, { id: `rm-${method}` });
    expectError(res, 404, -32601, `rm-${method}`, method);
  });

  // Method names that exist on Object.prototype must not reach the method table's prototype.
  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'])(
    'prototype-named method %s → 404, -32601',
    async (method) => {
      const res = await rpc(url, method, {}, { id: `proto-${method}` });
      expectError(res, 404, -32601, `proto-${method}`, method);
    },
  );

  it('unknown tool → -32602 (HTTP 200)', async () => {
    const res = await rpc(url, 'tools/call', { name: 'no_such_tool' }, { id: 'ut' });
    expectError(res, 200, -32602, 'ut', 'tools/call');
  });

  it('bad tool arguments → -32602 (HTTP 200)', async () => {
    const res = await rpc(
      url,
      'tools/call',
      { name: 'json_schema_2020_12_tool', arguments: { name: 5 } },
      { id: 'ba' },
    );
    expectError(res, 200, -32602, 'ba', 'tools/call');
    const notObject = await rpc(
      url,
      'tools/call',
      { name: 'test_simple_text', arguments: [1] },
      { id: 'ba2' },
    );
    expectError(notObject, 200, -32602, 'ba2', 'tools/call');
  });

  it('tool-level failure → a complete CallToolResult with isError: true', async () => {
    const res = await rpc(url, 'tools/call', { name: 'test_error_handling' }, { id: 'te' });
    const result = expectResult(res, 'te', 'tools/call');
    expect(result).toMatchObject({ resultType: 'complete', isError: true });
  });

  it('unknown prompt and missing prompt arguments → -32602', async () => {
    expectError(
      await rpc(url, 'prompts/get', { name: 'nope' }, { id: 'p1' }),
      200,
      -32602,
      'p1',
      'prompts/get',
    );
    const missing = await rpc(
      url,
      'prompts/get',
      { name: 'test_prompt_with_arguments', arguments: {} },
      { id: 'p2' },
    );
    expectError(missing, 200, -32602, 'p2', 'prompts/get');
  });

  it('unknown resource → -32602 with data.uri (HTTP 200)', async () => {
    const res = await rpc(url, 'resources/read', { uri: 'test://no-such-resource' }, { id: 'ur' });
    const error = expectError(res, 200, -32602, 'ur', 'resources/read');
    expect(error.data).toEqual({ uri: 'test://no-such-resource' });
  });

  it.each(['test://template/%/data', 'test://template/%E0%A4%A/data'])(
    'resource URI with malformed percent-encoding (%s) → -32602, not an internal error',
    async (uri) => {
      const res = await rpc(url, 'resources/read', { uri }, { id: 'pct' });
      expectError(res, 200, -32602, 'pct', 'resources/read');
    },
  );

  it.each(['test_simple_text', 'test_input_required_result_elicitation'])(
    'deeply nested tool arguments (50k levels) for %s → an answer, not an internal error',
    async (name) => {
      const depth = 50_000;
      const { body, headers } = buildRequest(
        'tools/call',
        { name, arguments: {} },
        { id: 'deep-args', caps: { elicitation: {} } },
      );
      const deep = `${'['.repeat(depth)}${']'.repeat(depth)}`;
      const text = JSON.stringify(body).replace('"arguments":{}', `"arguments":{"x":${deep}}`);
      expectDeepRefusedOrServed(await post(url, text, headers), 'deep-args', 'tools/call');
    },
  );

  it('a deeply nested logLevel (50k levels) → 400, -32602 (or -32600 when refused unread)', async () => {
    const depth = 50_000;
    const { body, headers } = buildRequest(
      'tools/list',
      {},
      { id: 'deep-level', meta: { [META_LOG_LEVEL]: '__X__' } },
    );
    const text = JSON.stringify(body).replace('"__X__"', `${'['.repeat(depth)}${']'.repeat(depth)}`);
    const res = await post(url, text, headers);
    expectDeepRefusedOrServed(res, 'deep-level', 'tools/list');
    expect(res.status).toBe(400);
  });

  it('invalid cursor → -32602', async () => {
    const res = await rpc(url, 'tools/list', { cursor: 'not-a-cursor' }, { id: 'cur' });
    expectError(res, 200, -32602, 'cur', 'tools/list');
  });

  it('test_missing_capability without sampling → 400, -32021, data.requiredCapabilities.sampling is an object', async () => {
    const res = await rpc(
      url,
      'tools/call',
      { name: 'test_missing_capability' },
      { id: 'mc', caps: { elicitation: {} } },
    );
    const error = expectError(res, 400, -32021, 'mc', 'tools/call');
    const required = asJson(asJson(error.data).requiredCapabilities);
    expect(Array.isArray(required)).toBe(false);
    expect(asJson(required.sampling)).toEqual({});
  });

  it('test_missing_capability with sampling declared → input_required asking for sampling', async () => {
    const res = await rpc(
      url,
      'tools/call',
      { name: 'test_missing_capability' },
      { id: 'mc2', caps: { sampling: {} } },
    );
    const result = expectResult(res, 'mc2', 'tools/call');
    expect(result.resultType).toBe('input_required');
    expect(asJson(asJson(result.inputRequests).summary).method).toBe('sampling/createMessage');
  });

  it('completion/complete: a completer lookup never hits Object.prototype', async () => {
    for (const name of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
      const res = await rpc(
        url,
        'completion/complete',
        { ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name, value: 't' } },
        { id: `cc-${name}` },
      );
      const result = expectResult(res, `cc-${name}`, 'completion/complete');
      expect(asJson(result.completion).values).toEqual([]);
    }
  });

  it('completion/complete for a prompt argument', async () => {
    const res = await rpc(
      url,
      'completion/complete',
      {
        ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
        argument: { name: 'arg1', value: 'te' },
      },
      { id: 'cc' },
    );
    const result = expectResult(res, 'cc', 'completion/complete');
    expect(asJson(result.completion).values).toEqual(['test', 'testing', 'tested']);
  });
});

describe('HTTP transport', () => {
  it.each([
    ['notifications/cancelled', { requestId: 1, reason: 'test' }],
    ['notifications/initialized', {}],
    ['notifications/unknown', undefined],
  ])('notification %s → 202 with an empty body', async (method, params) => {
    const body = params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
    const res = await post(url, body, { 'mcp-protocol-version': PROTOCOL_VERSION, 'mcp-method': method });
    expect(res.status).toBe(202);
    expect(res.text).toBe('');
    expect(res.headers.get('mcp-session-id')).toBeNull();
  });

  it.each(['GET', 'DELETE', 'PUT'])('%s → 405 with Allow: POST', async (method) => {
    const res = await rawRequest(url, { method, headers: { accept: 'application/json, text/event-stream' } });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
    for (const msg of res.messages) expect(validateMessage(msg)).toEqual([]);
  });

  it('unsupported Content-Type → 415', async () => {
    const { body, headers } = buildRequest('tools/list');
    const res = await post(url, body, { ...headers, 'content-type': 'text/plain' });
    expect(res.status).toBe(415);
    for (const msg of res.messages) expect(validateMessage(msg)).toEqual([]);
  });

  it.each(['evil.example', 'evil.example:80', 'localhost.evil.example', '127.0.0.2', '[::2]'])(
    'foreign Host %s → 403',
    async (host) => {
      const { body, headers } = buildRequest('server/discover');
      const res = await rawRequest(url, {
        headers: { ...(headers as Record<string, string>), 'content-type': 'application/json', host },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(403);
      for (const msg of res.messages) {
        expect(validateMessage(msg)).toEqual([]);
        expect(msg).not.toHaveProperty('id');
        // The refused value is named: a balancer rewriting Host shows up at once.
        expect(JSON.stringify(msg)).toContain(host.toLowerCase().replace(/:80$/, ''));
      }
    },
  );

  it.each(['localhost', '127.0.0.1', '[::1]', 'LOCALHOST'])(
    'Host %s (with the port) is accepted',
    async (host) => {
      const { body, headers } = buildRequest('server/discover', {}, { id: `host-${host}` });
      const res = await rawRequest(url, {
        headers: {
          ...(headers as Record<string, string>),
          'content-type': 'application/json',
          host: `${host}:${server.port}`,
        },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      const msg = asJson(res.messages[0]);
      expect(validateMessage(msg, 'server/discover')).toEqual([]);
      expect(msg.id).toBe(`host-${host}`);
    },
  );

  it.each(['https://evil.example', 'http://localhost.evil.example:3000', 'null', 'not a url'])(
    'foreign Origin %s → 403',
    async (origin) => {
      const res = await rpc(url, 'server/discover', {}, { headers: { origin } });
      expect(res.status).toBe(403);
      checkCommon(res);
      for (const msg of res.messages) expect(msg).not.toHaveProperty('id');
    },
  );

  it.each(['http://localhost:5173', 'http://127.0.0.1', 'http://[::1]:8080'])(
    'Origin %s is accepted',
    async (origin) => {
      const res = await rpc(url, 'server/discover', {}, { id: 'o', headers: { origin } });
      expectResult(res, 'o', 'server/discover');
    },
  );

  it('Mcp-Session-Id is ignored and never returned', async () => {
    const res = await rpc(
      url,
      'server/discover',
      {},
      { id: 'sess', headers: { 'mcp-session-id': 'abc-123' } },
    );
    expectResult(res, 'sess', 'server/discover');
    expect(res.headers.get('mcp-session-id')).toBeNull();
    const other = await rpc(url, 'tools/list', {}, { id: 'sess2', headers: { 'mcp-session-id': 'unknown' } });
    expectResult(other, 'sess2', 'tools/list');
  });

  it('GET /healthz → 200', async () => {
    const res = await fetch(`${server.base}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('other paths → 404', async () => {
    const { body, headers } = buildRequest('server/discover');
    const res = await post(`${server.base}/not-mcp`, body, headers);
    expect(res.status).toBe(404);
  });
});

describe('results', () => {
  const requests: [string, Json, Record<string, unknown>?][] = [
    ['server/discover', {}],
    ['tools/list', {}],
    ['tools/call', { name: 'test_simple_text' }],
    ['tools/call', { name: 'test_image_content' }],
    ['tools/call', { name: 'test_audio_content' }],
    ['tools/call', { name: 'test_embedded_resource' }],
    ['tools/call', { name: 'test_multiple_content_types' }],
    ['tools/call', { name: 'test_error_handling' }],
    ['tools/call', { name: 'json_schema_2020_12_tool', arguments: { name: 'a', email: 'a@example.com' } }],
    ['tools/call', { name: 'test_input_required_result_elicitation' }, { elicitation: {} }],
    ['tools/call', { name: 'test_input_required_result_capabilities' }],
    ['prompts/list', {}],
    ['prompts/get', { name: 'test_simple_prompt' }],
    ['prompts/get', { name: 'test_prompt_with_arguments', arguments: { arg1: 'a', arg2: 'b' } }],
    ['prompts/get', { name: 'test_prompt_with_embedded_resource', arguments: { resourceUri: 'test://x' } }],
    ['prompts/get', { name: 'test_prompt_with_image' }],
    ['prompts/get', { name: 'test_input_required_result_prompt' }, { elicitation: {} }],
    ['resources/list', {}],
    ['resources/templates/list', {}],
    ['resources/read', { uri: 'test://static-text' }],
    ['resources/read', { uri: 'test://static-binary' }],
    ['resources/read', { uri: 'test://template/123/data' }],
    [
      'completion/complete',
      {
        ref: { type: 'ref/resource', uri: 'test://template/{id}/data' },
        argument: { name: 'id', value: '1' },
      },
    ],
  ];

  it.each(requests)(
    '%s %j: resultType and serverInfo present, schema-valid',
    async (method, params, caps) => {
      const res = await rpc(url, method, params, { id: `res-${method}`, caps: caps ?? {} });
      const result = expectResult(res, `res-${method}`, method);
      expect(['complete', 'input_required']).toContain(result.resultType);
      if (result.resultType === 'input_required') {
        expect(result).not.toHaveProperty('ttlMs');
        expect(result).not.toHaveProperty('cacheScope');
      }
    },
  );

  it('server/discover shape', async () => {
    const result = expectResult(
      await rpc(url, 'server/discover', {}, { id: 'discover-1' }),
      'discover-1',
      'server/discover',
    );
    expect(result.resultType).toBe('complete');
    expect(result.supportedVersions).toEqual([PROTOCOL_VERSION]);
    const caps = asJson(result.capabilities);
    expect(caps.tools).toEqual({ listChanged: true });
    expect(caps.prompts).toEqual({ listChanged: true });
    expect(asJson(caps.resources)).toMatchObject({ listChanged: true });
    expect(caps.completions).toEqual({});
    expect(caps).not.toHaveProperty('tasks');
    expect(Number.isInteger(result.ttlMs)).toBe(true);
    expect(result.ttlMs as number).toBeGreaterThanOrEqual(0);
    expect(['public', 'private']).toContain(result.cacheScope);
    expect(result).not.toHaveProperty('serverInfo');
  });

  it('tools/list is deterministic, stateless and carries cache hints', async () => {
    const a = expectResult(await rpc(url, 'tools/list', {}, { id: 1 }), 1, 'tools/list');
    const b = expectResult(
      await rpc(url, 'tools/list', {}, { id: 'second', caps: { sampling: {}, elicitation: {} } }),
      'second',
      'tools/list',
    );
    expect(b.tools).toEqual(a.tools);
    const names = (a.tools as Json[]).map((t) => t.name);
    expect(names).toContain('test_simple_text');
    expect(new Set(names).size).toBe(names.length);
    for (const result of [a, b]) {
      expect(Number.isInteger(result.ttlMs)).toBe(true);
      expect(result.ttlMs as number).toBeGreaterThanOrEqual(0);
      expect(['public', 'private']).toContain(result.cacheScope);
    }
    expect(b.cacheScope).toBe(a.cacheScope);
    for (const tool of a.tools as Json[]) {
      expect(tool).not.toHaveProperty('execution');
      expect(asJson(tool.inputSchema).type).toBe('object');
    }
  });

  it.each(['prompts/list', 'resources/list', 'resources/templates/list'])(
    '%s carries cache hints',
    async (method) => {
      const result = expectResult(await rpc(url, method, {}, { id: 'ch' }), 'ch', method);
      expect(Number.isInteger(result.ttlMs)).toBe(true);
      expect(['public', 'private']).toContain(result.cacheScope);
    },
  );

  it('resources/read carries cache hints; tools/call does not', async () => {
    const read = expectResult(
      await rpc(url, 'resources/read', { uri: 'test://static-text' }, { id: 'r' }),
      'r',
      'resources/read',
    );
    expect(Number.isInteger(read.ttlMs)).toBe(true);
    const call = expectResult(
      await rpc(url, 'tools/call', { name: 'test_simple_text' }, { id: 'c' }),
      'c',
      'tools/call',
    );
    expect(call).not.toHaveProperty('ttlMs');
    expect(call).not.toHaveProperty('cacheScope');
  });
});

describe('request-scoped streams', () => {
  it('progress: SSE with 3 progress notifications before the response', async () => {
    const res = await rpc(
      url,
      'tools/call',
      { name: 'test_tool_with_progress' },
      { id: 'prog', meta: { progressToken: 'tok-1' } },
    );
    expect(res.status).toBe(200);
    expect(res.contentType).toMatch(/^text\/event-stream/);
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    checkCommon(res, 'tools/call');
    expect(res.messages).toHaveLength(4);
    const notes = res.messages.slice(0, 3).map(asJson);
    for (const note of notes) {
      expect(note.method).toBe('notifications/progress');
      expect(note).not.toHaveProperty('id');
      const params = asJson(note.params);
      expect(params.progressToken).toBe('tok-1');
      expect(params.total).toBe(100);
      expect(params._meta === undefined || !(META_SUBSCRIPTION_ID in asJson(params._meta))).toBe(true);
    }
    expect(notes.map((n) => asJson(n.params).progress)).toEqual([0, 50, 100]);
    const result = expectResult(res, 'prog', 'tools/call');
    expect(result.resultType).toBe('complete');
  });

  it('progress with an integer token keeps its JSON type', async () => {
    const res = await rpc(
      url,
      'tools/call',
      { name: 'test_tool_with_progress' },
      { id: 9, meta: { progressToken: 17 } },
    );
    checkCommon(res, 'tools/call');
    expect(asJson(asJson(res.messages[0]).params).progressToken).toBe(17);
  });

  it('no progressToken → a plain JSON response', async () => {
    const res = await rpc(url, 'tools/call', { name: 'test_tool_with_progress' }, { id: 'noprog' });
    expect(res.contentType).toMatch(/^application\/json/);
    expect(res.messages).toHaveLength(1);
    expectResult(res, 'noprog', 'tools/call');
  });

  it('a non-integer progressToken is rejected or never echoed in a schema-invalid notification', async () => {
    const res = await rpc(
      url,
      'tools/call',
      { name: 'test_tool_with_progress' },
      { id: 'pf', meta: { progressToken: 1.5 } },
    );
    checkCommon(res, 'tools/call');
    if (res.status !== 200) expectError(res, 400, -32602, 'pf', 'tools/call');
  });

  it('logging: no notifications/message without logLevel', async () => {
    const res = await rpc(url, 'tools/call', { name: 'test_logging_tool' }, { id: 'log0' });
    expect(res.contentType).toMatch(/^application\/json/);
    expect(res.messages).toHaveLength(1);
    expectResult(res, 'log0', 'tools/call');
  });

  it.each(['debug', 'info'])(
    'logging with logLevel %s → 3 notifications/message before the response',
    async (level) => {
      const res = await rpc(
        url,
        'tools/call',
        { name: 'test_logging_tool' },
        { id: 'log1', meta: { [META_LOG_LEVEL]: level } },
      );
      expect(res.contentType).toMatch(/^text\/event-stream/);
      checkCommon(res, 'tools/call');
      const notes = res.messages.slice(0, -1).map(asJson);
      expect(notes).toHaveLength(3);
      for (const note of notes) {
        expect(note.method).toBe('notifications/message');
        expect(asJson(note.params)).toMatchObject({ level: 'info', logger: 'conformance' });
      }
      expectResult(res, 'log1', 'tools/call');
    },
  );

  it('logging below the requested level is suppressed', async () => {
    const res = await rpc(
      url,
      'tools/call',
      { name: 'test_logging_tool' },
      { id: 'log2', meta: { [META_LOG_LEVEL]: 'warning' } },
    );
    expect(res.messages).toHaveLength(1);
    expectResult(res, 'log2', 'tools/call');
  });
});

describe('subscriptions/listen', () => {
  async function listen(id: Id, notifications: Json) {
    const { body, headers } = buildRequest('subscriptions/listen', { notifications }, { id });
    const stream = await openSse(url, body, headers);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.headers.get('mcp-session-id')).toBeNull();
    return stream;
  }

  const expectNote = (msg: unknown, method: string, id: Id): Json => {
    expect(validateMessage(msg, 'subscriptions/listen')).toEqual([]);
    const note = asJson(msg);
    expect(note.method).toBe(method);
    expect(note).not.toHaveProperty('id');
    const subscriptionId = asJson(asJson(note.params)._meta)[META_SUBSCRIPTION_ID];
    expect(subscriptionId).toStrictEqual(id);
    return asJson(note.params);
  };

  it.each(['listen-1', 4242])(
    'acknowledges first (subscriptionId %j), then delivers tools/list_changed; prompts-only listeners do not get it',
    async (id) => {
      const tools = await listen(id, { toolsListChanged: true });
      const prompts = await listen(`${id}-prompts`, { promptsListChanged: true });
      try {
        const ack = expectNote(await tools.next(), 'notifications/subscriptions/acknowledged', id);
        expect(ack.notifications).toEqual({ toolsListChanged: true });
        const ackP = expectNote(
          await prompts.next(),
          'notifications/subscriptions/acknowledged',
          `${id}-prompts`,
        );
        expect(ackP.notifications).toEqual({ promptsListChanged: true });

        const trigger = await rpc(url, 'tools/call', { name: 'test_trigger_tool_change' }, { id: 'trigger' });
        expectResult(trigger, 'trigger', 'tools/call');
        expectNote(await tools.next(), 'notifications/tools/list_changed', id);
        expect(await prompts.drain(300)).toEqual([]);

        const triggerP = await rpc(
          url,
          'tools/call',
          { name: 'test_trigger_prompt_change' },
          { id: 'trigger-p' },
        );
        expectResult(triggerP, 'trigger-p', 'tools/call');
        expectNote(await prompts.next(), 'notifications/prompts/list_changed', `${id}-prompts`);
        expect(await tools.drain(300)).toEqual([]);
      } finally {
        tools.close();
        prompts.close();
      }
    },
  );

  it('the acknowledgement omits unrequested and false filters', async () => {
    const stream = await listen('ack-subset', {
      toolsListChanged: false,
      resourcesListChanged: true,
      resourceSubscriptions: ['test://static-text'],
    });
    try {
      const ack = expectNote(await stream.next(), 'notifications/subscriptions/acknowledged', 'ack-subset');
      expect(ack.notifications).toEqual({
        resourcesListChanged: true,
        resourceSubscriptions: ['test://static-text'],
      });
    } finally {
      stream.close();
    }
  });

  it('missing params.notifications → -32602', async () => {
    const res = await rpc(url, 'subscriptions/listen', {}, { id: 'no-filter' });
    expectError(res, 200, -32602, 'no-filter', 'subscriptions/listen');
  });

  it('server shutdown ends a listen stream with a SubscriptionsListenResult', async () => {
    const own = await startTestServer();
    try {
      const { body, headers } = buildRequest(
        'subscriptions/listen',
        { notifications: { toolsListChanged: true } },
        { id: 'bye' },
      );
      const stream = await openSse(own.url, body, headers);
      expectNote(await stream.next(), 'notifications/subscriptions/acknowledged', 'bye');
      const closing = own.close();
      const final = await stream.next(3_000);
      expect(validateMessage(final, 'subscriptions/listen')).toEqual([]);
      expect(asJson(final)).toMatchObject({
        jsonrpc: '2.0',
        id: 'bye',
        result: { resultType: 'complete', _meta: { [META_SUBSCRIPTION_ID]: 'bye' } },
      });
      await closing;
      stream.close();
    } finally {
      await own.close();
    }
  });
});

describe('multi round-trip requests (MRTR)', () => {
  const elicit = { elicitation: {} };

  it('test_input_required_result_multi_round: 3 rounds with requestState, new ids each time', async () => {
    const name = 'test_input_required_result_multi_round';
    const r1 = expectResult(
      await rpc(url, 'tools/call', { name }, { id: 'mr-1', caps: elicit }),
      'mr-1',
      'tools/call',
    );
    expect(r1.resultType).toBe('input_required');
    expect(r1).not.toHaveProperty('ttlMs');
    expect(Object.keys(asJson(r1.inputRequests))).toEqual(['user_name']);
    expect(asJson(asJson(r1.inputRequests).user_name).method).toBe('elicitation/create');
    expect(typeof r1.requestState).toBe('string');

    const r2 = expectResult(
      await rpc(
        url,
        'tools/call',
        {
          name,
          inputResponses: { user_name: { action: 'accept', content: { name: 'Ada' } } },
          requestState: r1.requestState,
        },
        { id: 'mr-2', caps: elicit },
      ),
      'mr-2',
      'tools/call',
    );
    expect(r2.resultType).toBe('input_required');
    expect(Object.keys(asJson(r2.inputRequests))).toEqual(['favorite_color']);
    expect(typeof r2.requestState).toBe('string');
    expect(r2.requestState).not.toBe(r1.requestState);

    const r3 = expectResult(
      await rpc(
        url,
        'tools/call',
        {
          name,
          inputResponses: { favorite_color: { action: 'accept', content: { color: 'green' } } },
          requestState: r2.requestState,
        },
        { id: 'mr-3', caps: elicit },
      ),
      'mr-3',
      'tools/call',
    );
    expect(r3.resultType).toBe('complete');
    expect(r3.content).toEqual([{ type: 'text', text: 'Ada likes green.' }]);
    expect(r3).not.toHaveProperty('requestState');
  });

  it('MRTR on prompts/get', async () => {
    const name = 'test_input_required_result_prompt';
    const r1 = expectResult(
      await rpc(url, 'prompts/get', { name }, { id: 'pg-1', caps: elicit }),
      'pg-1',
      'prompts/get',
    );
    expect(r1.resultType).toBe('input_required');
    const r2 = expectResult(
      await rpc(
        url,
        'prompts/get',
        {
          name,
          inputResponses: { context: { action: 'accept', content: { context: 'ctx' } } },
          requestState: r1.requestState,
        },
        { id: 'pg-2', caps: elicit },
      ),
      'pg-2',
      'prompts/get',
    );
    expect(r2.resultType).toBe('complete');
  });

  it('without the elicitation capability → 400, -32021', async () => {
    const res = await rpc(
      url,
      'tools/call',
      { name: 'test_input_required_result_elicitation' },
      { id: 'noel' },
    );
    const error = expectError(res, 400, -32021, 'noel', 'tools/call');
    expect(asJson(asJson(asJson(error.data).requiredCapabilities).elicitation)).toEqual({});
  });

  async function firstState(name: string, id: Id): Promise<string> {
    const r = expectResult(await rpc(url, 'tools/call', { name }, { id, caps: elicit }), id, 'tools/call');
    expect(r.resultType).toBe('input_required');
    expect(typeof r.requestState).toBe('string');
    return r.requestState as string;
  }

  it('tampered requestState → -32602', async () => {
    const name = 'test_input_required_result_tampered_state';
    const state = await firstState(name, 'ts-1');
    const mid = Math.floor(state.length / 2);
    const flipped = `${state.slice(0, mid)}${state[mid] === 'A' ? 'B' : 'A'}${state.slice(mid + 1)}`;
    for (const bad of [flipped, `${state}A`, state.slice(0, -2), 'not-a-state', '']) {
      const res = await rpc(
        url,
        'tools/call',
        { name, inputResponses: { confirm: { action: 'accept', content: { ok: true } } }, requestState: bad },
        { id: 'ts-2', caps: elicit },
      );
      expectError(res, 200, -32602, 'ts-2', 'tools/call');
    }
    const ok = await rpc(
      url,
      'tools/call',
      { name, inputResponses: { confirm: { action: 'accept', content: { ok: true } } }, requestState: state },
      { id: 'ts-3', caps: elicit },
    );
    expect(expectResult(ok, 'ts-3', 'tools/call').content).toEqual([
      { type: 'text', text: 'state verified (accept)' },
    ]);
  });

  it('requestState replayed for a different tool → -32602', async () => {
    const state = await firstState('test_input_required_result_multi_round', 'rp-1');
    const res = await rpc(
      url,
      'tools/call',
      {
        name: 'test_input_required_result_elicitation',
        inputResponses: { user_name: { action: 'accept', content: { name: 'Eve' } } },
        requestState: state,
      },
      { id: 'rp-2', caps: elicit },
    );
    expectError(res, 200, -32602, 'rp-2', 'tools/call');
  });

  it('requestState replayed with different arguments or on another method → -32602', async () => {
    const name = 'test_input_required_result_elicitation';
    const state = await firstState(name, 'ra-1');
    const otherArgs = await rpc(
      url,
      'tools/call',
      { name, arguments: { extra: 1 }, requestState: state },
      { id: 'ra-2', caps: elicit },
    );
    expectError(otherArgs, 200, -32602, 'ra-2', 'tools/call');
    const otherMethod = await rpc(
      url,
      'prompts/get',
      { name: 'test_input_required_result_prompt', requestState: state },
      { id: 'ra-3', caps: elicit },
    );
    expectError(otherMethod, 200, -32602, 'ra-3', 'prompts/get');
  });

  it('requestState must be a string and inputResponses well-formed → -32602', async () => {
    const name = 'test_input_required_result_elicitation';
    expectError(
      await rpc(url, 'tools/call', { name, requestState: 42 }, { id: 'rs-1', caps: elicit }),
      200,
      -32602,
      'rs-1',
      'tools/call',
    );
    expectError(
      await rpc(
        url,
        'tools/call',
        { name, inputResponses: { user_name: 'yes' } },
        { id: 'rs-2', caps: elicit },
      ),
      200,
      -32602,
      'rs-2',
      'tools/call',
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------

interface WireFixture {
  description: string;
  request: { headers: Record<string, string>; body: unknown };
  response: { status: number; body: unknown };
}

const fixtureDir = new URL('../fixtures/wire/', import.meta.url);
const fixtures = readdirSync(fixtureDir)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((file) => [file, JSON.parse(readFileSync(new URL(file, fixtureDir), 'utf8')) as WireFixture] as const);

/** Replaces values in `actual` wherever `expected` holds the "<string>" placeholder and actual holds a string. */
function normalise(actual: unknown, expected: unknown): unknown {
  if (expected === '<string>' && typeof actual === 'string') return '<string>';
  if (Array.isArray(actual) && Array.isArray(expected))
    return actual.map((v, i) => normalise(v, expected[i]));
  if (typeof actual === 'object' && actual !== null && typeof expected === 'object' && expected !== null) {
    const exp = expected as Json;
    return Object.fromEntries(Object.entries(actual as Json).map(([k, v]) => [k, normalise(v, exp[k])]));
  }
  return actual;
}

describe('golden request/response fixtures', () => {
  it('has fixtures', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(10);
  });

  it.each(fixtures)('%s', async (_file, fixture) => {
    const { request, response } = fixture;
    const body = typeof request.body === 'string' ? request.body : (request.body as object);
    const res = await post(url, body, request.headers);
    const method =
      typeof request.body === 'object' && request.body !== null ? (request.body as Json).method : undefined;
    checkCommon(res, typeof method === 'string' ? method : undefined);
    expect(res.status).toBe(response.status);
    if (response.body === null) {
      expect(res.text).toBe('');
      return;
    }
    expect(res.messages).toHaveLength(1);
    expect(normalise(res.messages[0], response.body)).toStrictEqual(response.body);
  });
});
