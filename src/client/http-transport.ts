// Streamable HTTP transport: one POST per request with the standard headers; JSON or SSE replies read incrementally.
import { encodeHeaderValue, mcpNameSource } from '../wire/headers.js';
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import { META_PROTOCOL_VERSION } from '../wire/meta-keys.js';
import { InvalidResponseError } from './errors.js';
import { SseParser } from './sse-parser.js';
import type { ClientTransport, OutgoingRequest, SendOptions, TransportReply } from './transport.js';

export interface HttpTransportOptions {
  url: string;
  /** Bearer token, or a function returning one (e.g. refreshed). */
  token?: string | (() => string | Promise<string>);
  /** Extra headers per request (e.g. Mcp-Param-* mirrors computed by the client). */
  headers?: (request: OutgoingRequest) => Record<string, string>;
  fetch?: typeof fetch;
}

export function createHttpTransport(options: HttpTransportOptions): ClientTransport {
  const doFetch = options.fetch ?? fetch;
  return {
    description: options.url,
    async send(request: OutgoingRequest, opts: SendOptions = {}): Promise<TransportReply> {
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
      if (options.token !== undefined) {
        const token = typeof options.token === 'function' ? await options.token() : options.token;
        headers.authorization = `Bearer ${token}`;
      }
      const res = await doFetch(options.url, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: request.id,
          method: request.method,
          params: request.params,
        }),
        signal: opts.signal ?? null,
      });
      const contentType = res.headers.get('content-type') ?? '';
      if (!contentType.startsWith('text/event-stream')) {
        const text = await res.text();
        let message: unknown;
        try {
          message = JSON.parse(text);
        } catch {
          throw new InvalidResponseError(
            `HTTP ${res.status} from ${options.url}: not JSON (${text.slice(0, 80)})`,
          );
        }
        if (!isJsonObject(message))
          throw new InvalidResponseError(`HTTP ${res.status}: not a JSON-RPC message`);
        return { message, status: res.status };
      }
      if (res.body === null) throw new InvalidResponseError('event stream without a body');
      const parser = new SseParser();
      const decoder = new TextDecoder();
      const reader = res.body.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done)
            throw new InvalidResponseError(
              `the stream for request ${String(request.id)} ended without a response`,
            );
          for (const msg of parser.push(decoder.decode(value, { stream: true }))) {
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
    },
    async close() {},
  };
}
