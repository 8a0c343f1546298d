// An in-process durable-mcp server on a real loopback port, plus small HTTP/JSON-RPC helpers for wire tests.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import {
  createAnonymousAuthenticator,
  createHttpHandler,
  createMcpServer,
  listenHttp,
  LOOPBACK_HOSTS,
} from '../../src/index.js';
import type { McpServer, ServerOptions } from '../../src/index.js';
import conformanceToolSet from '../../examples/conformance/index.js';

export const PROTOCOL_VERSION = '2026-07-28';
export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
export const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

export const TEST_SERVER_INFO = { name: 'durable-mcp-test', version: '0.0.0' } as const;

export interface TestServerOptions {
  /** Extra createMcpServer options (merged over the conformance tool set and the test server info). */
  server?: Partial<ServerOptions>;
  maxBodyBytes?: number;
  keepAliveMs?: number;
  allowedHosts?: readonly string[];
}

export interface TestServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:41234/mcp. */
  url: string;
  /** Scheme + host + port, e.g. http://127.0.0.1:41234. */
  base: string;
  port: number;
  mcp: McpServer;
  close(): Promise<void>;
}

/** Starts the conformance fixture server on 127.0.0.1 with an ephemeral port. */
export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const mcp = createMcpServer({
    info: { ...TEST_SERVER_INFO },
    toolSets: [conformanceToolSet],
    ...opts.server,
  });
  const handler = createHttpHandler({
    server: mcp,
    authenticator: createAnonymousAuthenticator(),
    origin: { allowedHosts: opts.allowedHosts ?? LOOPBACK_HOSTS },
    ...(opts.maxBodyBytes !== undefined ? { maxBodyBytes: opts.maxBodyBytes } : {}),
    ...(opts.keepAliveMs !== undefined ? { keepAliveMs: opts.keepAliveMs } : {}),
  });
  const running = await listenHttp(handler, '127.0.0.1', 0);
  const base = new URL(running.url).origin;
  let closed = false;
  return {
    url: running.url,
    base,
    port: running.port,
    mcp,
    async close() {
      if (closed) return;
      closed = true;
      await mcp.close();
      await running.close(500);
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Request building

/** A valid 2026-07-28 request `_meta`. */
export function meta(
  caps: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    [META_PROTOCOL_VERSION]: PROTOCOL_VERSION,
    [META_CLIENT_CAPABILITIES]: caps,
    [META_CLIENT_INFO]: { name: 'durable-mcp-wire-tests', version: '0.0.0' },
    ...extra,
  };
}

/** Encodes a header value the way a 2026-07-28 client must (base64 sentinel when not plain visible ASCII). */
export function encodeHeaderValue(value: string): string {
  const plain = /^[\x20-\x7e]*$/.test(value) && value === value.trim() && !/^=\?base64\?.*\?=$/s.test(value);
  return plain ? value : sentinel(value);
}

/** Always wraps a value in the `=?base64?…?=` sentinel. */
export const sentinel = (value: string): string =>
  `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;

/** The standard request headers for a method (MCP-Protocol-Version, Mcp-Method and, if given, Mcp-Name). */
export function standardHeaders(method: string, name?: string): Record<string, string> {
  const headers: Record<string, string> = {
    'mcp-protocol-version': PROTOCOL_VERSION,
    'mcp-method': method,
  };
  if (name !== undefined) headers['mcp-name'] = encodeHeaderValue(name);
  return headers;
}

/** Which params field `Mcp-Name` mirrors for a method. */
export function nameFor(method: string, params: Record<string, unknown>): string | undefined {
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

export interface RequestSpec {
  id?: string | number;
  caps?: Record<string, unknown>;
  /** Extra `_meta` keys (logLevel, progressToken, …). */
  meta?: Record<string, unknown>;
  /** Extra headers; a value of undefined removes a header. */
  headers?: HeaderInit;
}

let nextId = 1;

/** Builds a valid request body plus its standard headers. */
export function buildRequest(
  method: string,
  params: Record<string, unknown> = {},
  spec: RequestSpec = {},
): { body: Record<string, unknown>; headers: HeaderInit } {
  const id = spec.id ?? nextId++;
  const body = { jsonrpc: '2.0', id, method, params: { ...params, _meta: meta(spec.caps, spec.meta) } };
  const headers = { ...standardHeaders(method, nameFor(method, params)), ...spec.headers };
  return { body, headers };
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP

export interface PostResult {
  status: number;
  headers: Headers;
  text: string;
  /** JSON-RPC messages of the body: the JSON value, or every SSE `data:` payload in order. */
  messages: unknown[];
  /** Set when a body (or an SSE data payload) was not valid JSON. */
  jsonError?: string;
  /** True when an SSE stream was still open when `timeoutMs` elapsed (the request was then aborted). */
  truncated: boolean;
  contentType: string;
}

export interface PostOptions {
  /** Overall budget; for SSE responses the stream is cut (truncated: true) when it elapses. Default 10 s. */
  timeoutMs?: number;
  /** For SSE responses: cut the stream (truncated: true) this long after the response headers arrived. */
  sseTimeoutMs?: number;
  method?: string;
}

const DEFAULT_HEADERS: Record<string, string> = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

/** Header map for requests: undefined removes a default header, an array sends the header several times. */
export type HeaderInit = Record<string, string | readonly string[] | undefined>;

function mergeHeaders(headers: HeaderInit): Headers {
  const out = new Headers();
  const merged: HeaderInit = { ...DEFAULT_HEADERS };
  for (const [k, v] of Object.entries(headers)) merged[k.toLowerCase()] = v;
  for (const [k, v] of Object.entries(merged)) {
    if (v === undefined) continue;
    if (typeof v === 'string') out.set(k, v);
    else for (const item of v) out.append(k, item);
  }
  return out;
}

/** Parses SSE text into the JSON payloads of its events (comment lines and non-data fields ignored). */
export function parseSse(text: string): { messages: unknown[]; jsonError?: string } {
  const messages: unknown[] = [];
  let jsonError: string | undefined;
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
  return jsonError === undefined ? { messages } : { messages, jsonError };
}

/** POSTs a body (string, JSON value or raw bytes) with default JSON headers merged with `headers`. */
export async function post(
  url: string,
  body: string | object | Uint8Array,
  headers: HeaderInit = {},
  options: PostOptions = {},
): Promise<PostResult> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const controller = new AbortController();
  let timer = setTimeout(() => controller.abort(), timeoutMs);
  const payload: string | Uint8Array =
    typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body);
  try {
    const res = await fetch(url, {
      method: options.method ?? 'POST',
      headers: mergeHeaders(headers),
      body: options.method === 'GET' || options.method === 'HEAD' ? undefined : payload,
      signal: controller.signal,
    });
    const contentType = res.headers.get('content-type') ?? '';
    if (options.sseTimeoutMs !== undefined && contentType.startsWith('text/event-stream')) {
      clearTimeout(timer);
      timer = setTimeout(() => controller.abort(), options.sseTimeoutMs);
    }
    const chunks: Uint8Array[] = [];
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
    let messages: unknown[] = [];
    let jsonError: string | undefined;
    if (contentType.startsWith('text/event-stream')) {
      ({ messages, jsonError } = parseSse(text));
    } else if (text.length > 0) {
      try {
        messages = [JSON.parse(text)];
      } catch (err) {
        jsonError = `invalid JSON body: ${String(err)}`;
      }
    }
    const result: PostResult = {
      status: res.status,
      headers: res.headers,
      text,
      messages,
      truncated,
      contentType,
    };
    if (jsonError !== undefined) result.jsonError = jsonError;
    return result;
  } finally {
    clearTimeout(timer);
  }
}

export interface RawResult {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  messages: unknown[];
}

/**
 * A request through node:http instead of fetch: lets tests set `Host`, keep header-name case and send any method.
 * Connects to the URL's address whatever `Host` says.
 */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string | string[]>; body?: string | Uint8Array } = {},
): Promise<RawResult> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname.replace(/^\[|\]$/g, ''),
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? 'POST',
        headers: options.headers ?? {},
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const contentType = String(res.headers['content-type'] ?? '');
          let messages: unknown[] = [];
          if (contentType.startsWith('text/event-stream')) messages = parseSse(text).messages;
          else if (text.length > 0) {
            try {
              messages = [JSON.parse(text)];
            } catch {
              messages = [];
            }
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, messages });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('rawRequest: timed out')));
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Sends a valid request for `method` and returns the HTTP outcome. */
export async function rpc(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  spec: RequestSpec = {},
  options: PostOptions = {},
): Promise<PostResult & { request: Record<string, unknown> }> {
  const { body, headers } = buildRequest(method, params, spec);
  const res = await post(url, body, headers, options);
  return { ...res, request: body };
}

/** The last message of a response (the JSON-RPC response itself on an SSE stream). */
export function lastMessage(res: PostResult): Record<string, unknown> {
  const msg = res.messages[res.messages.length - 1];
  if (typeof msg !== 'object' || msg === null) {
    throw new Error(`no JSON-RPC message in response (status ${res.status}): ${res.text.slice(0, 200)}`);
  }
  return msg as Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------------------------
// Incremental SSE reading (long-lived streams such as subscriptions/listen)

export interface SseReader {
  status: number;
  headers: Headers;
  /** Resolves with the next JSON-RPC message, or undefined if none arrives within `timeoutMs` / the stream ended. */
  next(timeoutMs?: number): Promise<unknown>;
  /** Collects messages until `timeoutMs` passes without one. */
  drain(timeoutMs?: number): Promise<unknown[]>;
  /** Aborts the request (the server sees the stream close). */
  close(): void;
}

export async function openSse(
  url: string,
  body: string | object,
  headers: HeaderInit = {},
): Promise<SseReader> {
  const controller = new AbortController();
  const res = await fetch(url, {
    method: 'POST',
    headers: mergeHeaders(headers),
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: controller.signal,
  });
  if (res.body === null) throw new Error(`no response body (status ${res.status})`);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const queue: unknown[] = [];
  let ended = false;
  let pending: Promise<void> | undefined;

  const pump = (): Promise<void> => {
    pending ??= reader.read().then(
      ({ done, value }) => {
        pending = undefined;
        if (done) {
          ended = true;
          return;
        }
        buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const parsed = parseSse(`${block}\n\n`);
          if (parsed.jsonError !== undefined) throw new Error(parsed.jsonError);
          queue.push(...parsed.messages);
        }
      },
      () => {
        pending = undefined;
        ended = true;
      },
    );
    return pending;
  };

  const next = async (timeoutMs = 2_000): Promise<unknown> => {
    const deadline = Date.now() + timeoutMs;
    while (queue.length === 0 && !ended) {
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), left);
      });
      const outcome = await Promise.race([pump().then(() => 'data' as const), timeout]);
      clearTimeout(timer);
      if (outcome === 'timeout') return undefined;
    }
    return queue.shift();
  };

  return {
    status: res.status,
    headers: res.headers,
    next,
    async drain(timeoutMs = 300) {
      const out: unknown[] = [];
      for (;;) {
        const msg = await next(timeoutMs);
        if (msg === undefined) return out;
        out.push(msg);
      }
    },
    close() {
      controller.abort();
      reader.cancel().catch(() => undefined);
    },
  };
}

/** Waits until `predicate` holds (polling), or throws after `timeoutMs`. */
export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error('waitFor: timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
