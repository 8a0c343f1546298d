// Public entry of `durable-mcp/client`.
export { createHttpClient, McpRpcError, parseSse } from './http-client.js';
export type { ClientOptions, McpHttpClient, RpcReply } from './http-client.js';
export { encodeHeaderValue } from '../wire/headers.js';
