// Streamable HTTP transport: one POST per request with the standard headers; JSON or SSE replies read incrementally;
// requests safe to repeat sent again when a balancer or a restarting server turned them away.
import { encodeHeaderValue, mcpNameSource } from '../wire/headers.js';
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import { META_PROTOCOL_VERSION } from '../wire/meta-keys.js';
import { authorizationHeader, sendWithAuth } from './auth-retry.js';
import { InvalidResponseError, StreamEndedError } from './errors.js';
import type { ClientAuth } from './oauth/types.js';
import { fetchWithRetry, isSafeToRepeat, retryPolicy, type RetryOptions } from './retry.js';
import { readMessage, SseParser } from './sse-parser.js';
import type { ClientTransport, OutgoingRequest, SendOptions, TransportReply } from './transport.js';

export interface HttpTransportOptions {
  url: string;
  /** Bearer token, or a function returning one (e.g. refreshed). */
  token?: string | (() => string | Promise<string>);
  /**
   * A sign-in (e.g. `createOAuth(...)`): its token is sent with each request (before `token`), and a 401 or an
   * `insufficient_scope` 403 is handed to it; when it got new tokens the request is sent again (at most 3 times).
   */
  auth?: ClientAuth;
  /** Extra headers per request (e.g. Mcp-Param-* mirrors computed by the client). */
  headers?: (request: OutgoingRequest) => Record<string, string>;
  fetch?: typeof fetch;
  /**
   * Sending requests that are safe to repeat again after HTTP 502/503 or a connection refused or reset before any
   * response (default: on, see {@link RetryOptions}); `false` sends each request once.
   */
  retry?: RetryOptions | false;
}

/** The headers of one attempt (the token is asked for again on each, so a refreshed one is used). */
async function headersOf(
  options: HttpTransportOptions,
  request: OutgoingRequest,
  signal: AbortSignal | undefined,
): Promise<Record<string, string>> {
  const meta = request.params._meta as JsonObject | undefined;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': String(meta?.[META_PROTOCOL_VERSION] ?? ''),
    'mcp-method': request.method,
    ...options.headers?.(request),
  };
  const name = mcpNameSource(request.method, request.params);
  if (typeof name === 'string') headers['mcp-name'] = encodeHeaderValue(name);
  const authorization = await authorizationHeader(options.auth, options.token, signal);
  if (authorization !== undefined) headers.authorization = authorization;
  return headers;
}

/** A JSON reply's message. */
async function jsonReply(res: Response, url: string): Promise<TransportReply> {
  const text = await res.text();
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    throw new InvalidResponseError(`HTTP ${res.status} from ${url}: not JSON (${text.slice(0, 80)})`);
  }
  if (!isJsonObject(message)) throw new InvalidResponseError(`HTTP ${res.status}: not a JSON-RPC message`);
  return { message, status: res.status };
}

/**
 * An event stream's response to the request, its notifications handed over as they come. Events of other types than
 * `message` are not MCP's and are passed over; an event whose data is not JSON fails the request.
 */
async function streamReply(
  res: Response,
  request: OutgoingRequest,
  opts: SendOptions,
): Promise<TransportReply> {
  if (res.body === null) throw new InvalidResponseError('event stream without a body');
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) throw new StreamEndedError(request.id, parser.retryMs, parser.lastEventId);
      for (const event of parser.push(decoder.decode(value, { stream: true }))) {
        const read = readMessage(event);
        if (read === undefined) continue;
        if (!read.ok)
          throw new InvalidResponseError(
            `the stream for request ${String(request.id)} carried an event that is not JSON (${read.reason})`,
          );
        const msg = read.message;
        if (!isJsonObject(msg)) continue;
        if ('id' in msg && msg.id === request.id && ('result' in msg || 'error' in msg)) {
          return { message: msg, status: res.status };
        }
        if ('method' in msg && !('id' in msg)) opts.onNotification?.(msg);
      }
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

export function createHttpTransport(options: HttpTransportOptions): ClientTransport {
  const doFetch = options.fetch ?? fetch;
  const policy = retryPolicy(options.retry);
  return {
    description: options.url,
    async send(request: OutgoingRequest, opts: SendOptions = {}): Promise<TransportReply> {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: request.id,
        method: request.method,
        params: request.params,
      });
      const attempt = async (): Promise<Response> =>
        doFetch(options.url, {
          method: 'POST',
          headers: await headersOf(options, request, opts.signal),
          body,
          signal: opts.signal ?? null,
        });
      const policyOf = isSafeToRepeat(request) ? policy : undefined;
      const res = await sendWithAuth(
        options.auth,
        () => fetchWithRetry(policyOf, opts.signal, attempt),
        opts.signal,
      );
      const contentType = res.headers.get('content-type') ?? '';
      return contentType.startsWith('text/event-stream')
        ? streamReply(res, request, opts)
        : jsonReply(res, options.url);
    },
    async close() {},
  };
}
