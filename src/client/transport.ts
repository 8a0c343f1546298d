// How the client reaches a server: one request at a time, notifications before the response delivered as they come.
import type { JsonObject, RequestId } from '../wire/jsonrpc.js';

export interface OutgoingRequest {
  id: RequestId;
  method: string;
  /** The full params, `_meta` included. */
  params: JsonObject;
}

export interface SendOptions {
  signal?: AbortSignal;
  /** Called for each notification that arrives for this request (progress, log, listen events). */
  onNotification?: (message: JsonObject) => void;
}

export interface TransportReply {
  /** The JSON-RPC response (`result` or `error`). */
  message: JsonObject;
  /** HTTP status, when the transport has one. */
  status?: number;
}

export interface ClientTransport {
  readonly description: string;
  send(request: OutgoingRequest, options?: SendOptions): Promise<TransportReply>;
  close(): Promise<void>;
}
