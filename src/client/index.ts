// Public entry of `durable-mcp/client`.
export { createClient } from './client.js';
export type { CreateClientOptions, McpClient, CallResult, RequestOptions } from './client.js';
export { TaskHandle } from './task-handle.js';
export { newIdempotencyKey } from './idempotency-key.js';
export type { TaskOutcome, InputHandler, FollowOptions } from './task-handle.js';
export { createHttpTransport } from './http-transport.js';
export { createStdioTransport } from './stdio-transport.js';
export type { ClientTransport } from './transport.js';
export type { Journal, JournalEntry, PendingCall } from './journal.js';
export { McpRpcError, InputRequiredError, InvalidResponseError } from './errors.js';
export { createHttpClient, parseSse } from './http-client.js';
export type { ClientOptions, McpHttpClient, RpcReply } from './http-client.js';
export { encodeHeaderValue } from '../wire/headers.js';
