// The JSON-RPC error of the wire, on both sides: the only error a server serialises onto the wire, and the error a
// client raises for one it received.
import { ErrorCode } from './codes.js';

export class ProtocolError extends Error {
  readonly code: number;
  readonly data: unknown;
  /** On the client side, the HTTP status the error arrived with (when over HTTP). */
  readonly httpStatus: number | undefined;

  constructor(code: number, message: string, data?: unknown, httpStatus?: number) {
    super(message);
    this.name = 'ProtocolError';
    this.code = code;
    this.data = data;
    this.httpStatus = httpStatus;
  }

  toJSON(): { code: number; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

export const invalidParams = (message: string, data?: unknown): ProtocolError =>
  new ProtocolError(ErrorCode.InvalidParams, message, data);

export const methodNotFound = (method: string): ProtocolError =>
  new ProtocolError(ErrorCode.MethodNotFound, `Method not found: ${method}`);

export const headerMismatch = (message: string): ProtocolError =>
  new ProtocolError(ErrorCode.HeaderMismatch, `Header mismatch: ${message}`);

export const missingCapability = (
  message: string,
  requiredCapabilities: Record<string, unknown>,
): ProtocolError =>
  new ProtocolError(ErrorCode.MissingRequiredClientCapability, message, { requiredCapabilities });

export const internalError = (message = 'Internal error'): ProtocolError =>
  new ProtocolError(ErrorCode.InternalError, message);

/** Normalises any throwable into a ProtocolError; never leaks stack traces or driver messages. */
export function toProtocolError(err: unknown): ProtocolError {
  if (err instanceof ProtocolError) return err;
  if (isWireMappable(err)) return new ProtocolError(err.wireCode, err.message, err.wireData);
  return internalError();
}

/** Domain errors may opt into a wire mapping by carrying these fields. */
export interface WireMappable {
  wireCode: number;
  message: string;
  wireData?: unknown;
}

export function isWireMappable(err: unknown): err is WireMappable {
  return typeof err === 'object' && err !== null && typeof (err as WireMappable).wireCode === 'number';
}
