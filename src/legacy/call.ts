// One legacy request in flight: its session, the caller, and the response stream it may write to.
import type { AuthInfo } from '../protocol/context.js';
import type { McpServer } from '../protocol/server.js';
import type { JsonObject, RequestId } from '../wire/jsonrpc.js';
import type { LegacySession, SessionRegistry } from './sessions.js';

export interface LegacyCall {
  server: McpServer;
  sessions: SessionRegistry;
  session: LegacySession;
  id: RequestId;
  method: string;
  params: JsonObject;
  auth: AuthInfo;
  signal: AbortSignal;
  /** Sends a notification on this request's response stream (turning it into SSE). */
  emit(method: string, params: JsonObject): void;
  /** Sends a server→client request on this request's response stream and waits for the answer. */
  ask(method: string, params: JsonObject): Promise<JsonObject>;
}
