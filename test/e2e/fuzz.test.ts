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
// The generators and the oracle are those of test/support/fuzz-model.ts (shared with the fuzz section of the
// reliability suite, scripts/chaos/fuzz/), on the conformance surface.
//
// Reproduce a failure with the seed fast-check prints: FUZZ_SEED=<seed> npx vitest run test/e2e/fuzz.test.ts
// FUZZ_RUNS overrides the number of runs per property (default 300).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  check,
  compact,
  CONFORMANCE_SURFACE,
  CORRECT_PLAN,
  deepArray,
  deepObject,
  fuzzArbitraries,
  headersFor,
  hugeAscii,
  hugeNonAscii,
  idArb,
  isObject,
  jsonBodyArb,
  LOG_LEVELS,
  mutate,
  OVERSIZE_HEADERS,
  oversizeBody,
  sentOf,
  sometimes,
  sseTimeoutFor,
  uriArb,
  type Json,
  type Sent,
} from '../support/fuzz-model.js';
import { validateMessage } from '../support/schema.js';
import {
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_LOG_LEVEL,
  META_PROTOCOL_VERSION,
  META_SUBSCRIPTION_ID,
  openSse,
  post,
  PROTOCOL_VERSION,
  startTestServer,
  type HeaderInit,
  type PostResult,
  type TestServer,
} from '../support/server.js';

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

const { headerPlan, messageArb, validRequestArb, nearValidBaseArb, mutationsArb, bytesArb } =
  fuzzArbitraries(CONFORMANCE_SURFACE);

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

/** Throws (with the exchange) when a response breaks a property of the oracle. */
function expectSound(sent: Sent, res: PostResult): void {
  const verdict = check(sent, res);
  if (verdict !== undefined) throw new Error(`${verdict.why}\n${verdict.detail}`);
}

const lastOf = (res: PostResult): Json => res.messages[res.messages.length - 1] as Json;

let sentCount = 0;

/** Sends one fuzz case and checks it; every 50th case also checks /healthz. */
async function exchange(body: string | Uint8Array, headers: HeaderInit, kind = 'body'): Promise<PostResult> {
  const res = await post(url, body, headers, { timeoutMs: 15_000, sseTimeoutMs: sseTimeoutFor(body) });
  expectSound(sentOf(body, kind, headers), res);
  if (++sentCount % 50 === 0) await expectHealthy();
  return res;
}

// ---------------------------------------------------------------------------------------------------------------

describe('fuzz: the HTTP endpoint', () => {
  it(
    'random JSON values as bodies',
    async () => {
      await fc.assert(
        fc.asyncProperty(jsonBodyArb, headerPlan, async (value, plan) => {
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
      await fc.assert(
        fc.asyncProperty(bytesArb, headerPlan, async (body, plan) => {
          await exchange(body, headersFor(plan, undefined), 'bytes');
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
        fc.asyncProperty(validRequestArb, fc.nat(), headerPlan, async (req, at, plan) => {
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
        fc.asyncProperty(messageArb, headerPlan, async (msg, plan) => {
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
          mutationsArb,
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
      await fc.assert(
        fc.asyncProperty(validRequestArb, idArb, async (req, id) => {
          const msg = { ...req, id };
          await exchange(JSON.stringify(msg), headersFor(CORRECT_PLAN, msg));
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
      const payloads: [string, string][] = [
        ['deep array', deepArray()],
        ['deep object', deepObject()],
        // Just under a plausible nesting limit (64), so that the value reaches the method handlers.
        ['deep array (50)', deepArray(50)],
        ['deep object (50)', deepObject(50, '"x"')],
        ['1 MB ASCII string', JSON.stringify(hugeAscii())],
        ['~1 MB non-ASCII string', JSON.stringify(hugeNonAscii())],
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
        // A 1 MB name cannot travel in a header (headersFor leaves it out); the mismatch (-32020) is a fine answer.
        const headers = headersFor({ ...CORRECT_PLAN, region: { kind: 'omit' } }, parsed);
        try {
          const res = await post(url, text, headers, {
            timeoutMs: 15_000,
            sseTimeoutMs: sseTimeoutFor(text),
          });
          expectSound({ parsed, label }, res);
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
      const body = oversizeBody();
      for (let i = 0; i < 3; i++) {
        try {
          const res = await post(url, body, OVERSIZE_HEADERS);
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
