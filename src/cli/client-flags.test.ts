import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../wire/codes.js';
import { ProtocolError } from '../wire/protocol-error.js';
import { EXIT, exitCodeOf } from './client-flags.js';

const exitOf = (code: number, httpStatus?: number): number =>
  exitCodeOf(new ProtocolError(code, 'm', undefined, httpStatus));

describe('the exit code of a JSON-RPC error', () => {
  it('is 1 for a refusal of the request: invalid params, a missing client capability, a rate limit or quota', () => {
    expect(exitOf(ErrorCode.InvalidParams, 200)).toBe(EXIT.failed);
    expect(exitOf(ErrorCode.MissingRequiredClientCapability, 400)).toBe(EXIT.failed);
    expect(exitOf(ErrorCode.TooManyRequests, 429)).toBe(EXIT.failed);
  });

  it('is 3 for a server that cannot serve it or does not speak with this client', () => {
    for (const code of [
      ErrorCode.InternalError,
      ErrorCode.ParseError,
      ErrorCode.InvalidRequest, // also a token the server does not accept (401)
      ErrorCode.MethodNotFound,
      ErrorCode.HeaderMismatch,
      ErrorCode.UnsupportedProtocolVersion,
      -32000,
    ])
      expect(exitOf(code), String(code)).toBe(EXIT.serverError);
  });
});
