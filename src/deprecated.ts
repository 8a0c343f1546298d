// Names the root entry exported before they moved to `durable-mcp/advanced`, kept for one minor release
// (docs/api-changes.md). Each is the same type as the one `durable-mcp/advanced` exports.
import type * as wire from './transport/http/wire.js';
import type * as jsonrpc from './wire/jsonrpc.js';
import type * as reply from './transport/http/reply.js';

/** @deprecated Import from `durable-mcp/advanced`; removed in the next minor release. */
export type HttpWire = wire.HttpWire;
/** @deprecated Import from `durable-mcp/advanced`; removed in the next minor release. */
export type WireExchange = wire.WireExchange;
/** @deprecated Import from `durable-mcp/advanced`; removed in the next minor release. */
export type WirePost = wire.WirePost;
/** @deprecated Import from `durable-mcp/advanced`; removed in the next minor release. */
export type ParseOutcome = jsonrpc.ParseOutcome;
/** @deprecated Import from `durable-mcp/advanced`; removed in the next minor release. */
export type IncomingMessage = jsonrpc.IncomingMessage;
/** @deprecated Import from `durable-mcp/advanced`; removed in the next minor release. */
export type IncomingRequest = jsonrpc.IncomingRequest;
/** @deprecated Import from `durable-mcp/advanced`; removed in the next minor release. */
export type IncomingNotification = jsonrpc.IncomingNotification;
/** @deprecated Import from `durable-mcp/advanced`; removed in the next minor release. */
export type HttpReply = reply.HttpReply;
