// Errors the client raises: JSON-RPC errors from the server, and conditions a caller must handle.
import type { JsonObject } from '../wire/jsonrpc.js';

/** A JSON-RPC error answered by the server (code, message, data), with the HTTP status when over HTTP. */
export class McpRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: unknown,
    readonly httpStatus: number | undefined,
  ) {
    super(message);
    this.name = 'McpRpcError';
  }
}

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
