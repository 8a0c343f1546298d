// One request as seen by a method handler: its envelope, caller, cancellation and response stream.
import type { RequestEnvelope } from '../wire/envelope.js';
import type { HeaderLookup } from '../wire/headers.js';
import type { JsonObject, RequestId } from '../wire/jsonrpc.js';
import type { AuthInfo } from './tool-types.js';

export interface RequestScope {
  id: RequestId;
  method: string;
  envelope: RequestEnvelope;
  auth: AuthInfo;
  signal: AbortSignal;
  /** Request headers (lower-case names); undefined on stdio. */
  header: HeaderLookup | undefined;
  /** Sends a notification on this request's response stream (switching an HTTP response to SSE). */
  emit(method: string, params: JsonObject): void;
  /** Resolves once the response stream can take more (back-pressure); at once when it is not congested. */
  whenWritable(): Promise<void>;
  /**
   * Calls `fn` once when the client goes away (at once when it already has); returns the way to stop waiting. For a
   * long-lived waiter it holds less than a listener on `signal`. Absent: wait on `signal`.
   */
  onGone?(fn: () => void): () => void;
}

export type MethodHandler = (params: JsonObject, scope: RequestScope) => Promise<JsonObject> | JsonObject;
