// A bare JSON-RPC client for one server: the full `_meta` envelope on every request, the reply and every
// notification that came with it, nothing else (no MRTR rounds, no task following: `createClient` does those).
// It speaks through the same HTTP transport as `createClient`.
import { ErrorCode } from '../wire/codes.js';
import type { JsonObject, RequestId } from '../wire/jsonrpc.js';
import {
  LATEST_PROTOCOL_VERSION,
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_PROTOCOL_VERSION,
} from '../wire/meta-keys.js';
import { isJsonObject } from '../wire/jsonrpc.js';
import { ProtocolError } from '../wire/protocol-error.js';
import { createHttpTransport } from './http-transport.js';
import type { ClientAuth } from './oauth/types.js';
import type { RetryOptions } from './retry.js';

export interface ClientOptions {
  url: string;
  token?: string;
  /** A sign-in (`createOAuth`), as for the HTTP transport. */
  auth?: ClientAuth;
  clientInfo?: { name: string; version: string };
  capabilities?: JsonObject;
  protocolVersion?: string;
  fetch?: typeof fetch;
  /** Requests safe to repeat sent again after HTTP 502/503 or a refused or reset connection (see RetryOptions). */
  retry?: RetryOptions | false;
  /** The JSON-RPC id of the first request (default 1); each next one is one more. */
  firstId?: number;
}

export interface RpcReply {
  /** The JSON-RPC id this client used for the request. */
  id: RequestId;
  status: number;
  notifications: JsonObject[];
  result: JsonObject;
}

export interface HttpRequestOptions {
  capabilities?: JsonObject;
  signal?: AbortSignal;
  onNotification?: (notification: JsonObject) => void;
}

export interface McpHttpClient {
  /** `onNotification` sees each notification as it arrives (on a stream), before the reply. */
  request(method: string, params?: JsonObject, options?: HttpRequestOptions): Promise<RpcReply>;
  call(method: string, params?: JsonObject, options?: { capabilities?: JsonObject }): Promise<JsonObject>;
}

export function createHttpClient(options: ClientOptions): McpHttpClient {
  const transport = createHttpTransport({
    url: options.url,
    token: options.token,
    auth: options.auth,
    fetch: options.fetch,
    retry: options.retry,
  });
  const version = options.protocolVersion ?? LATEST_PROTOCOL_VERSION;
  let nextId = options.firstId ?? 1;

  async function request(
    method: string,
    params: JsonObject = {},
    opts: HttpRequestOptions = {},
  ): Promise<RpcReply> {
    const id: RequestId = nextId++;
    const meta: JsonObject = {
      [META_PROTOCOL_VERSION]: version,
      [META_CLIENT_CAPABILITIES]: opts.capabilities ?? options.capabilities ?? {},
    };
    if (options.clientInfo !== undefined) meta[META_CLIENT_INFO] = options.clientInfo;
    const notifications: JsonObject[] = [];
    const { message, status = 0 } = await transport.send(
      { id, method, params: { ...params, _meta: { ...meta, ...(params._meta as JsonObject) } } },
      {
        signal: opts.signal,
        onNotification: (n) => {
          notifications.push(n);
          opts.onNotification?.(n);
        },
      },
    );
    if (isJsonObject(message.error)) {
      const e = message.error;
      throw new ProtocolError(Number(e.code), String(e.message), e.data, status);
    }
    if (message.id !== id || !isJsonObject(message.result))
      throw new ProtocolError(ErrorCode.InternalError, `no response for request ${id}`, undefined, status);
    return { id, status, notifications, result: message.result };
  }

  return {
    request,
    async call(method, params, opts) {
      return (await request(method, params, opts)).result;
    },
  };
}
