// A minimal 2025-11-25 client for wire tests: initialize, session headers, requests checked against the 2025-11-25
// schema, streams whose server→client requests the test answers, the GET stream and DELETE.
import type { Authenticator } from '../../src/index.js';
import { validateLegacy } from './legacy-schema.js';
import { openSse, parseSse, post, type HeaderInit, type SseReader } from './server.js';

export const LEGACY_VERSION = '2025-11-25';

/** A bare 2025-11-25 `initialize` POST: the raw answer, to see whether the legacy wire took it. */
export const legacyInitialize = (url: string): Promise<Response> =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }),
  });

type Json = Record<string, unknown>;

export interface LegacyExchange {
  status: number;
  /** The final JSON-RPC response. */
  response: Json;
  /** Everything before it on an SSE response (notifications, server→client requests). */
  before: Json[];
}

export interface LegacyClient {
  url: string;
  sessionId: string;
  headers: Record<string, string>;
  /** One request; throws when any message breaks the 2025-11-25 schema. */
  request(method: string, params?: Json): Promise<LegacyExchange>;
  /** The result of a request, or throws with the JSON-RPC error. */
  result(method: string, params?: Json): Promise<Json>;
  /** The JSON-RPC error of a request (throws when it succeeded). */
  error(method: string, params?: Json): Promise<{ code: number; message: string; data?: unknown }>;
  /** A request whose response stream stays readable (tasks/result asking for input). */
  open(method: string, params?: Json): Promise<SseReader>;
  /** POSTs a JSON-RPC response to a server→client request; returns the HTTP status. */
  answer(id: unknown, result: Json): Promise<number>;
  notify(method: string, params?: Json): Promise<number>;
  /** Opens the session's GET stream. */
  listen(): Promise<{ status: number; next(timeoutMs?: number): Promise<Json | undefined>; close(): void }>;
  end(): Promise<number>;
}

let nextId = 1;

/** Bearer tokens → principals, for isolation tests (a missing or unknown token gets 401). */
export function tokenAuthenticator(
  tokens: Record<string, { tenant: string; principal: string }>,
): Authenticator {
  return {
    mode: 'test-tokens',
    authenticate(header) {
      const token = /^Bearer (.+)$/.exec(header('authorization') ?? '')?.[1];
      const auth = token === undefined ? undefined : tokens[token];
      if (auth !== undefined) return { ok: true, auth };
      return { ok: false, status: 401, challenge: 'Bearer', message: 'Unauthorized' };
    },
  };
}

/** Sends `initialize` + `notifications/initialized`; `extra` headers (e.g. authorization) go on every request. */
export async function legacyConnect(
  url: string,
  extra: Record<string, string> = {},
  capabilities: Json = { elicitation: {}, tasks: { requests: { elicitation: { create: {} } } } },
): Promise<LegacyClient> {
  const init = await post(
    url,
    {
      jsonrpc: '2.0',
      id: nextId++,
      method: 'initialize',
      params: {
        protocolVersion: LEGACY_VERSION,
        capabilities,
        clientInfo: { name: 'legacy-test', version: '0' },
      },
    },
    extra,
  );
  const initProblems = validateLegacy(init.messages[0], 'initialize');
  if (init.status !== 200 || initProblems.length > 0)
    throw new Error(`initialize: ${init.status} ${init.text} ${initProblems.join('; ')}`);
  const sessionId = init.headers.get('mcp-session-id');
  if (sessionId === null) throw new Error('no Mcp-Session-Id');
  return legacyClientFor(url, sessionId, extra, true);
}

/** A client on an existing session (e.g. one created through another replica). */
export async function legacyClientFor(
  url: string,
  sessionId: string,
  extra: Record<string, string> = {},
  sendInitialized = false,
): Promise<LegacyClient> {
  const headers: Record<string, string> = {
    ...extra,
    'mcp-session-id': sessionId,
    'mcp-protocol-version': LEGACY_VERSION,
  };
  const send = (body: Json, h: HeaderInit = headers) => post(url, body, h, { timeoutMs: 20_000 });
  const client: LegacyClient = {
    url,
    sessionId,
    headers,
    async request(method, params = {}) {
      const res = await send({ jsonrpc: '2.0', id: nextId++, method, params });
      const messages = res.messages as Json[];
      const problems = messages.flatMap((m) => validateLegacy(m, method));
      if (problems.length > 0)
        throw new Error(`${method}: ${problems.join('; ')}\n${res.text.slice(0, 600)}`);
      const response = messages[messages.length - 1];
      if (response === undefined) throw new Error(`${method}: no response (${res.status} ${res.text})`);
      return { status: res.status, response, before: messages.slice(0, -1) };
    },
    async result(method, params) {
      const { response } = await client.request(method, params);
      if (!('result' in response)) throw new Error(`${method} failed: ${JSON.stringify(response.error)}`);
      return response.result as Json;
    },
    async error(method, params) {
      const { response } = await client.request(method, params);
      if (!('error' in response)) throw new Error(`${method} succeeded: ${JSON.stringify(response.result)}`);
      return response.error as { code: number; message: string; data?: unknown };
    },
    open: (method, params = {}) => openSse(url, { jsonrpc: '2.0', id: nextId++, method, params }, headers),
    async answer(id, result) {
      return (await send({ jsonrpc: '2.0', id, result } as Json)).status;
    },
    async notify(method, params = {}) {
      return (await send({ jsonrpc: '2.0', method, params })).status;
    },
    async listen() {
      const controller = new AbortController();
      const res = await fetch(url, {
        method: 'GET',
        headers: { ...headers, accept: 'text/event-stream' },
        signal: controller.signal,
      });
      const reader = res.body?.getReader();
      const decoder = new TextDecoder();
      const queue: Json[] = [];
      let buffer = '';
      let reading: Promise<void> | undefined;
      const pump = (): Promise<void> =>
        (reading ??= (reader?.read() ?? Promise.resolve({ done: true, value: undefined })).then(
          ({ done, value }) => {
            reading = undefined;
            if (done || value === undefined) return;
            buffer += decoder.decode(value, { stream: true });
            let cut: number;
            while ((cut = buffer.indexOf('\n\n')) !== -1) {
              queue.push(...(parseSse(buffer.slice(0, cut + 2)).messages as Json[]));
              buffer = buffer.slice(cut + 2);
            }
          },
          () => {
            reading = undefined;
          },
        ));
      return {
        status: res.status,
        async next(timeoutMs = 2_000) {
          const deadline = Date.now() + timeoutMs;
          while (queue.length === 0 && Date.now() < deadline) {
            let timer: NodeJS.Timeout | undefined;
            await Promise.race([pump(), new Promise((r) => (timer = setTimeout(r, deadline - Date.now())))]);
            clearTimeout(timer);
          }
          return queue.shift();
        },
        close() {
          controller.abort();
          reader?.cancel().catch(() => undefined);
        },
      };
    },
    async end() {
      const res = await fetch(url, { method: 'DELETE', headers });
      await res.body?.cancel();
      return res.status;
    },
  };
  if (sendInitialized) await client.notify('notifications/initialized');
  return client;
}
