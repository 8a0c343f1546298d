// Minimal Streamable HTTP client: full `_meta` envelope and standard headers on every request, JSON or SSE replies.
import { encodeHeaderValue, mcpNameSource } from '../wire/headers.js';
import { isJsonObject, type JsonObject, type RequestId } from '../wire/jsonrpc.js';
import {
  LATEST_PROTOCOL_VERSION,
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_PROTOCOL_VERSION,
} from '../wire/meta-keys.js';
import { McpRpcError } from './errors.js';

export { McpRpcError };

export interface ClientOptions {
  url: string;
  token?: string;
  clientInfo?: { name: string; version: string };
  capabilities?: JsonObject;
  protocolVersion?: string;
  fetch?: typeof fetch;
}

export interface RpcReply {
  /** The JSON-RPC id this client used for the request. */
  id: RequestId;
  status: number;
  notifications: JsonObject[];
  result: JsonObject;
}

export interface McpHttpClient {
  request(
    method: string,
    params?: JsonObject,
    options?: { capabilities?: JsonObject; signal?: AbortSignal },
  ): Promise<RpcReply>;
  call(method: string, params?: JsonObject, options?: { capabilities?: JsonObject }): Promise<JsonObject>;
}

export function createHttpClient(options: ClientOptions): McpHttpClient {
  const doFetch = options.fetch ?? fetch;
  const version = options.protocolVersion ?? LATEST_PROTOCOL_VERSION;
  let nextId = 1;

  async function request(
    method: string,
    params: JsonObject = {},
    opts: { capabilities?: JsonObject; signal?: AbortSignal } = {},
  ): Promise<RpcReply> {
    const id: RequestId = nextId++;
    const meta: JsonObject = {
      [META_PROTOCOL_VERSION]: version,
      [META_CLIENT_CAPABILITIES]: opts.capabilities ?? options.capabilities ?? {},
    };
    if (options.clientInfo !== undefined) meta[META_CLIENT_INFO] = options.clientInfo;
    const body = {
      jsonrpc: '2.0',
      id,
      method,
      params: { ...params, _meta: { ...meta, ...(params._meta as JsonObject) } },
    };
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': version,
      'mcp-method': method,
    };
    const name = mcpNameSource(method, params);
    if (typeof name === 'string') headers['mcp-name'] = encodeHeaderValue(name);
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    const res = await doFetch(options.url, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: opts.signal ?? null,
    });
    const contentType = res.headers.get('content-type') ?? '';
    const messages = contentType.startsWith('text/event-stream')
      ? parseSse(await res.text())
      : [await res.json()];
    const notifications = messages.filter((m) => isJsonObject(m) && !('id' in m)) as JsonObject[];
    const reply = messages.find((m) => isJsonObject(m) && m.id === id) as JsonObject | undefined;
    if (reply === undefined)
      throw new McpRpcError(-32603, `no response for request ${id}`, undefined, res.status);
    if (isJsonObject(reply.error)) {
      const e = reply.error;
      throw new McpRpcError(Number(e.code), String(e.message), e.data, res.status);
    }
    return { id, status: res.status, notifications, result: reply.result as JsonObject };
  }

  return {
    request,
    async call(method, params, opts) {
      return (await request(method, params, opts)).result;
    },
  };
}

/** Splits an SSE body into the JSON messages of its `data:` fields. */
export function parseSse(text: string): unknown[] {
  const out: unknown[] = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data.length > 0) out.push(JSON.parse(data));
  }
  return out;
}
