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
