// An in-process durable-mcp server on a real loopback port, plus small HTTP/JSON-RPC helpers for wire tests (the
// wire names of protocol.ts and the POST helpers of http.ts are re-exported here).
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import {
  createAnonymousAuthenticator,
  createHttpHandler,
  listenHttp,
  LOOPBACK_HOSTS,
} from '../../src/index.js';
import { createMcpServer } from '../../src/advanced.js';
import type { McpServer, ServerOptions } from '../../src/index.js';
import conformanceToolSet from '../../examples/conformance/index.js';
import { mergeHeaders, parseSse, post, type HeaderInit, type PostOptions, type PostResult } from './http.js';
import {
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_PROTOCOL_VERSION,
  nameFor,
  PROTOCOL_VERSION,
  sentinel,
} from './protocol.js';

export { parseSse, post, type HeaderInit, type PostOptions, type PostResult } from './http.js';
export {
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_LOG_LEVEL,
  META_PROTOCOL_VERSION,
  META_SERVER_INFO,
  META_SUBSCRIPTION_ID,
  nameFor,
  PROTOCOL_VERSION,
  sentinel,
} from './protocol.js';

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

/** The standard request headers for a method (MCP-Protocol-Version, Mcp-Method and, if given, Mcp-Name). */
export function standardHeaders(method: string, name?: string): Record<string, string> {
  const headers: Record<string, string> = {
    'mcp-protocol-version': PROTOCOL_VERSION,
    'mcp-method': method,
  };
  if (name !== undefined) headers['mcp-name'] = encodeHeaderValue(name);
  return headers;
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
  /** Whether the server ended the response. */
  readonly ended: boolean;
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
    get ended() {
      return ended;
    },
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
