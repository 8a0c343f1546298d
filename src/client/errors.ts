// Errors the client raises besides the server's JSON-RPC errors (`ProtocolError`, from the wire): conditions a caller
// must handle.
import type { JsonObject } from '../wire/jsonrpc.js';

/** The server asked for input (MRTR or a task) and no input handler was given to answer it. */
export class InputRequiredError extends Error {
  constructor(
    readonly inputRequests: Record<string, JsonObject>,
    readonly taskId?: string,
  ) {
    super(
      `the server asks for input (${Object.keys(inputRequests).join(', ')}) and no input handler was given`,
    );
    this.name = 'InputRequiredError';
  }
}

/** The server answered something this client cannot accept (e.g. an unknown resultType). */
export class InvalidResponseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidResponseError';
  }
}

/**
 * An event stream that ended before the response to its request came. It keeps what the stream told a client that
 * comes back: the reconnection time it asked for (`retry`) and the id of its last event (`Last-Event-ID`).
 */
export class StreamEndedError extends InvalidResponseError {
  constructor(
    readonly requestId: string | number,
    readonly retryMs: number | undefined,
    readonly lastEventId: string | undefined,
  ) {
    super(`the stream for request ${String(requestId)} ended without a response`);
    this.name = 'StreamEndedError';
  }
}
