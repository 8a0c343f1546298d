// What a tool, prompt or resource handler sees of the request it serves.
import type { RequestEnvelope } from '../wire/envelope.js';
import type { RequestId } from '../wire/jsonrpc.js';
import type { LogLevel } from '../wire/meta-keys.js';
import type { InputRequest, InputRequests, InputResponse, InputResponses, JsonValue } from './types.js';

export interface AuthInfo {
  tenant: string;
  principal: string;
}

export interface HandlerContext {
  readonly requestId: RequestId;
  readonly method: string;
  readonly envelope: RequestEnvelope;
  readonly auth: AuthInfo;
  /** Fires when the client goes away (stream closed) or the server shuts down. */
  readonly signal: AbortSignal;
  /** Sends `notifications/progress` if the request carried a progressToken; otherwise does nothing. */
  progress(progress: number, total?: number, message?: string): void;
  /** Sends `notifications/message` if the request asked for this level via `_meta…/logLevel`. */
  log(level: LogLevel, data: JsonValue, logger?: string): void;
  /** Returns the client's answer for `key`, or ends this round asking for it (MRTR). */
  input(key: string, request: InputRequest): InputResponse;
  /** Like `input`, for several requests asked at once. */
  inputs(requests: InputRequests): InputResponses;
  /** The state this handler passed to `inputRequired` in the previous round, verified. */
  readonly requestState: JsonValue | undefined;
  /** Ends this round with an InputRequiredResult carrying these requests and state. */
  inputRequired(options: { inputRequests?: InputRequests; state?: JsonValue }): never;
}
