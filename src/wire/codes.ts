// JSON-RPC error codes used on the 2026-07-28 wire, and the HTTP status each maps to.

export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
  /** Application code (outside the reserved range) for rate limits and quotas. */
  TooManyRequests: 429,
} as const;

export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Where an error arose: before dispatch (envelope, headers, framing) or inside a method handler. */
export type ErrorOrigin = 'envelope' | 'handler';

const envelopeStatus: Record<number, number> = {
  [ErrorCode.ParseError]: 400,
  [ErrorCode.InvalidRequest]: 400,
  [ErrorCode.MethodNotFound]: 404,
  [ErrorCode.InvalidParams]: 400,
  [ErrorCode.InternalError]: 500,
  [ErrorCode.HeaderMismatch]: 400,
  [ErrorCode.MissingRequiredClientCapability]: 400,
  [ErrorCode.UnsupportedProtocolVersion]: 400,
};

// Handler errors are ordinary JSON-RPC error responses (HTTP 200), except the codes the spec pins.
const handlerStatus: Record<number, number> = {
  [ErrorCode.TooManyRequests]: 429,
  [ErrorCode.MethodNotFound]: 404,
  [ErrorCode.InternalError]: 500,
  [ErrorCode.HeaderMismatch]: 400,
  [ErrorCode.MissingRequiredClientCapability]: 400,
  [ErrorCode.UnsupportedProtocolVersion]: 400,
};

export function httpStatusFor(code: number, origin: ErrorOrigin): number {
  if (origin === 'envelope') return envelopeStatus[code] ?? 400;
  return handlerStatus[code] ?? 200;
}
